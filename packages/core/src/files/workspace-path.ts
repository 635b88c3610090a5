import { type BigIntStats, constants } from 'node:fs';
import { type FileHandle, open, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';
import {
  isMissing,
  isWithin,
  resolveWorkspacePath,
  WorkspacePathError,
} from '@paddock/harness/workspace-path';
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
 * A client's path as a path relative to the workspace (`.` for the workspace itself). An absolute
 * path is accepted under `/workspace` only: any other names the host's filesystem, not the task's.
 */
export function relativeToWorkspace(requested: string | undefined): string {
  if (!requested) return '.';
  if (!path.posix.isAbsolute(requested)) return requested;
  const relative = path.posix.relative(sandboxWorkspace, requested);
  if (relative === '..' || relative.startsWith('../')) throw invalidPath(requested);
  return relative || '.';
}

export interface Located {
  /** The path on the host. */
  hostPath: string;
  /** Relative to the workspace, normalized: `src/a.txt`, or `.` for the workspace itself. */
  path: string;
}

/**
 * Resolves a client's path in the workspace with the harness tools' confinement (no `..` escape, no
 * absolute path elsewhere, no symlink leading out, no NUL byte): 400 `invalid_path` otherwise.
 */
export async function locate(workspaceDir: string, requested: string | undefined): Promise<Located> {
  const relative = relativeToWorkspace(requested);
  let hostPath: string;
  try {
    hostPath = await resolveWorkspacePath(workspaceDir, relative);
  } catch (error) {
    if (error instanceof WorkspacePathError) throw new PaddockError('invalid_path', error.message);
    if (isMissing(error)) throw pathNotFound(requested ?? '');
    throw error;
  }
  return { hostPath, path: path.relative(path.resolve(workspaceDir), hostPath) || '.' };
}

/**
 * Opens a located path and checks, on the open descriptor, that what was opened lies in the
 * workspace: the sandbox writes the workspace while we read it, and a symlink swapped in after
 * `locate` must not lead the read out. Non-blocking, so a FIFO cannot hold the request.
 */
export async function openConfined(
  workspaceDir: string,
  located: Located,
  flags = 0,
): Promise<{ handle: FileHandle; stats: BigIntStats }> {
  let handle: FileHandle;
  try {
    handle = await open(
      located.hostPath,
      constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY | flags,
    );
  } catch (error) {
    if (isMissing(error)) throw pathNotFound(located.path);
    if (errorCode(error) === 'ELOOP') throw invalidPath(located.path, 'the path is a symbolic link');
    if (errorCode(error) === 'ENXIO') throw notAFile(located.path);
    throw error;
  }
  try {
    // Linux: the descriptor's link in /proc names the file it refers to now, whatever path led there.
    const opened = await readlink(`/proc/self/fd/${handle.fd}`);
    if (opened.endsWith(' (deleted)')) throw pathNotFound(located.path);
    if (!isWithin(await realpath(workspaceDir), opened)) throw invalidPath(located.path);
    return { handle, stats: await handle.stat({ bigint: true }) };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** The path of an open directory's entry, reached through the descriptor (no path re-resolution). */
export function entryThrough(handle: FileHandle, name: string): string {
  return `/proc/self/fd/${handle.fd}/${name}`;
}

export const notAFile = (where: string) =>
  new PaddockError('not_a_file', `not a regular file (a directory?): ${JSON.stringify(where)}`);

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}
