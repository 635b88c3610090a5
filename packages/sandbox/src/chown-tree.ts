import { lchown, lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Hands a workspace to the sandbox uid, including files the server put there as root. lchown, so a
 * symlink planted in the workspace cannot redirect the chown to a host file.
 */
export async function chownTree(path: string, uid: number, gid: number): Promise<void> {
  const stat = await lstat(path);
  if (stat.uid !== uid || stat.gid !== gid) await lchown(path, uid, gid);
  if (!stat.isDirectory()) return;
  for (const entry of await readdir(path)) await chownTree(join(path, entry), uid, gid);
}
