import { lstat, realpath } from 'node:fs/promises';
import path from 'node:path';

/**
 * Resolves a tool's path argument inside the workspace, refusing anything that leaves it: absolute
 * paths elsewhere, `..` escapes, and symlinks whose target lies outside. A path that does not exist
 * yet is judged by its nearest existing ancestor, since that is where it would be created.
 */
export async function resolveWorkspacePath(workspaceDir: string, requested: string): Promise<string> {
  const root = path.resolve(workspaceDir);
  const target = path.resolve(root, requested);
  if (!isWithin(root, target)) throw new Error(`path is outside the workspace: ${requested}`);
  const realRoot = await realpath(root);
  let probe = target;
  for (;;) {
    try {
      await lstat(probe);
    } catch (error) {
      if (isMissing(error) && probe !== root) {
        probe = path.dirname(probe);
        continue;
      }
      throw error;
    }
    let real: string;
    try {
      real = await realpath(probe);
    } catch {
      // A dangling or looping symlink: where a write would land cannot be known ahead.
      throw new Error(`path goes through a broken symlink: ${requested}`);
    }
    if (!isWithin(realRoot, real))
      throw new Error(`path leads outside the workspace through a symlink: ${requested}`);
    return target;
  }
}

function isWithin(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return (
    relative === '' ||
    (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative))
  );
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
