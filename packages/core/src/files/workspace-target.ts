import { lstat, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { resolveWorkspacePath } from '@paddock/harness/workspace-path';
import { PaddockError } from '../errors.ts';

/** A thread's workspace on the host: `<workspacesDir>/<thread_id>` (made when first needed). */
export async function ensureWorkspaceDir(workspacesDir: string, threadId: string): Promise<string> {
  const dir = path.join(workspacesDir, threadId);
  await mkdir(dir, { recursive: true });
  return dir;
}

/**
 * Resolves a client's path inside the workspace (D12): one that leaves it through `..`, an absolute
 * path or a symlink is a 400 `invalid_path`. Answers the host path.
 */
export async function resolveInWorkspace(workspaceDir: string, requested: string): Promise<string> {
  try {
    return await resolveWorkspacePath(workspaceDir, requested);
  } catch (error) {
    // An errno error is the filesystem failing, not the path being wrong.
    if ((error as NodeJS.ErrnoException).code !== undefined) throw error;
    throw new PaddockError('invalid_path', (error as Error).message);
  }
}

/** Where a file can be written: inside the workspace and not an existing directory. */
export async function resolveFileTarget(
  workspaceDir: string,
  requested: string,
): Promise<{ absolute: string; relative: string }> {
  const absolute = await resolveInWorkspace(workspaceDir, requested);
  const existing = await lstat(absolute).catch(() => undefined);
  if (existing?.isDirectory()) {
    throw new PaddockError('invalid_path', `path is a directory, not a file: ${requested}`);
  }
  return {
    absolute,
    relative: path.relative(path.resolve(workspaceDir), absolute).split(path.sep).join('/'),
  };
}
