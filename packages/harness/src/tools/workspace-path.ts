import { lstat, realpath } from 'node:fs/promises';
import path from 'node:path';

/**
 * A requested path that leaves the workspace (or cannot be judged safely); other errors are the
 * filesystem's. Its name stays `Error`: the model reads tool failures as `Error: <message>`.
 */
export class WorkspacePathError extends Error {}

/**
 * Resolves a tool's path argument inside the workspace, refusing anything that leaves it: absolute
 * paths elsewhere, `..` escapes, and symlinks whose target lies outside. A path that does not exist
 * yet is judged by its nearest existing ancestor, since that is where it would be created.
 */
export async function resolveWorkspacePath(workspaceDir: string, requested: string): Promise<string> {
  // A NUL byte would be cut by the system call: what is checked would not be what is opened.
  if (requested.includes('\0'))
    throw new WorkspacePathError(`path contains a NUL byte: ${JSON.stringify(requested)}`);
  const root = path.resolve(workspaceDir);
  const target = path.resolve(root, requested);
  if (!isWithin(root, target)) throw new WorkspacePathError(`path is outside the workspace: ${requested}`);
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
      throw new WorkspacePathError(`path goes through a broken symlink: ${requested}`);
    }
    if (!isWithin(realRoot, real))
      throw new WorkspacePathError(`path leads outside the workspace through a symlink: ${requested}`);
    return target;
  }
}

/** Whether `candidate` is `root` or lies below it (both absolute and normalized). */
export function isWithin(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return (
    relative === '' ||
    (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative))
  );
}

/** A missing file, or a path through a non-directory. */
export function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
