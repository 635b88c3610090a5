import path from 'node:path';
import { PaddockError } from '../errors.ts';

/** Where a task's workspace is mounted inside its sandbox; clients may name paths under it. */
const sandboxWorkspace = '/workspace';

export const invalidPath = (requested: string, why = 'the path leads outside the workspace') =>
  new PaddockError('invalid_path', `${why}: ${JSON.stringify(requested)}`);
export const pathNotFound = (requested: string) =>
  new PaddockError(
    'path_not_found',
    `no such file or directory in the workspace: ${JSON.stringify(requested)}`,
  );

/**
 * A client's path as a normalized path relative to the workspace (`.` for the workspace itself),
 * judged by its text alone: `..` may not climb out, an absolute path is accepted under `/workspace`
 * only (any other names the host's filesystem, not the task's), and a NUL byte is refused (the
 * system call would cut the path there). Symlinks are the workspace helper's to judge.
 */
export function relativeToWorkspace(requested: string | undefined): string {
  if (!requested) return '.';
  if (requested.includes('\0')) throw invalidPath(requested, 'the path contains a NUL byte');
  const relative = path.posix.isAbsolute(requested)
    ? path.posix.relative(sandboxWorkspace, requested)
    : path.posix.normalize(requested).replace(/\/+$/, '');
  if (relative === '..' || relative.startsWith('../')) throw invalidPath(requested);
  return relative === '' ? '.' : relative;
}
