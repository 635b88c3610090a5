import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { resolveWorkspacePath } from '@paddock/harness/workspace-path';
import type { MachineKind, MachineSize } from '@paddock/protocol';
import { findAgent, type ThreadRow } from '@paddock/store';
import type { Services } from '../context.ts';
import { PaddockError } from '../errors.ts';
import { bootSize } from '../machines/machine-size.ts';

/**
 * Makes thread workspaces: the server wires the sandbox package's `Workspaces`, the one place they
 * are made, each owned by its sandbox's own uid from the start, a volume of the size's quota when
 * the host can.
 */
export interface WorkspaceMaker {
  /** Makes the workspace at `dir` unless it exists, and mounts it; answers its owner's uid. */
  ensure(dir: string, size: MachineSize): Promise<{ dir: string; uid: number | undefined }>;
}

/**
 * A thread's workspace on the host, `<workspacesDir>/<thread_id>`, made when first needed (by a boot
 * or an upload, whichever comes first) and there, mounted, when this answers. `uid` is the thread's
 * sandbox uid, which owns it (undefined when the server is not root).
 */
export async function ensureWorkspace(
  services: Pick<Services, 'store' | 'workspaces' | 'workspacesDir'>,
  thread: Pick<ThreadRow, 'id' | 'agent_id'>,
): Promise<{ dir: string; uid: number | undefined }> {
  const agent = await findAgent(services.store.db, thread.agent_id);
  // The size only counts when the workspace is made: its quota is the size's at that time.
  const size = agent ? bootSize(agent.machine_kind as MachineKind, agent.machine_size as MachineSize) : 'S';
  return services.workspaces.ensure(path.join(services.workspacesDir, thread.id), size);
}

/** `ensureWorkspace`'s directory. */
export async function ensureWorkspaceDir(
  services: Pick<Services, 'store' | 'workspaces' | 'workspacesDir'>,
  thread: Pick<ThreadRow, 'id' | 'agent_id'>,
): Promise<string> {
  return (await ensureWorkspace(services, thread)).dir;
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
