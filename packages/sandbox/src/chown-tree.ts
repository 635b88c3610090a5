import { lchown, lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Hands a tree the host made to a uid (the compile cache, around its warm-up run). Never for a
 * workspace: a sandbox could swap a directory for a symlink mid-walk. lchown, so no link is followed
 * at the leaves.
 */
export async function chownTree(path: string, uid: number, gid: number): Promise<void> {
  const stat = await lstat(path);
  if (stat.uid !== uid || stat.gid !== gid) await lchown(path, uid, gid);
  if (!stat.isDirectory()) return;
  for (const entry of await readdir(path)) await chownTree(join(path, entry), uid, gid);
}
