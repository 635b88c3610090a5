import type { ChildProcess } from 'node:child_process';
import { chmod, mkdir, readdir, rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { chownTree } from './chown-tree.ts';
import { runToExit } from './run-to-exit.ts';

const warmTimeoutMs = 60_000;

/**
 * Type stripping costs Node ~60 ms per boot; a compile cache removes it. Sandboxes cannot share a
 * writable cache (one could poison another's code), so a warm-up run fills it as the sandbox uid, at
 * the sandbox's own paths (Node keys the cache by uid and file path), and sandboxes bind it read-only.
 * Refilled at every provider start, so edited sources are never served stale.
 */
export async function warmCompileCache(input: {
  dir: string;
  uid: number | undefined;
  /** Starts the supervisor's `--warm` run with `cacheDir` bound writable and `workspaceDir` as workspace. */
  launch: (cacheDir: string, workspaceDir: string) => ChildProcess;
}): Promise<string> {
  const { dir, uid } = input;
  const scratch = `${dir}.warm`;
  for (const path of [dir, scratch]) {
    await rm(path, { recursive: true, force: true });
    await mkdir(path, { recursive: true, mode: 0o755 });
    if (uid !== undefined) await chownTree(path, uid, uid);
  }
  const { code, stderr } = await runToExit(input.launch(dir, scratch), warmTimeoutMs, 'warm-up run');
  await rm(scratch, { recursive: true, force: true });
  if (code !== 0) throw new Error(`warm-up run exited with ${code}: ${stderr.trim()}`);
  // Owned by root again, so nothing running as the sandbox uid on the host can rewrite it.
  if (uid !== undefined) await chownTree(dir, 0, 0);
  await makeReadable(dir);
  return dir;
}

async function makeReadable(dir: string): Promise<void> {
  await chmod(dir, 0o755);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await makeReadable(path);
    else await chmod(path, 0o644);
  }
}

/**
 * The cache as a sandbox of `uid` reads it. Node keys its cache directory by uid
 * (`v24.x-x64-<hash>-<uid>`), and every sandbox has a uid of its own: the warm-up's directory is
 * linked under each sandbox uid's name, read-only like the rest.
 */
export async function compileCacheFor(dir: string, uid: number | undefined): Promise<string> {
  if (uid === undefined) return dir;
  const entries = await readdir(dir, { withFileTypes: true });
  const warmed = entries.find((entry) => entry.isDirectory() && /-\d+$/.test(entry.name))?.name;
  if (!warmed) return dir;
  const own = warmed.replace(/-\d+$/, `-${uid}`);
  if (own !== warmed) {
    await symlink(warmed, join(dir, own)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
  }
  return dir;
}
