import path from 'node:path';
import type { MachineKind, MachineSize } from '@paddock/protocol';
import { findAgent, setThreadMachine, type ThreadRow } from '@paddock/store';
import type { Services } from '../context.ts';
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
  services: Pick<Services, 'store' | 'workspaces' | 'workspacesDir' | 'nodeId'>,
  thread: Pick<ThreadRow, 'id' | 'agent_id' | 'machine_id'>,
): Promise<{ dir: string; uid: number | undefined }> {
  // The first to make a thread's workspace (an upload before any boot) holds it: its turns run here.
  if (thread.machine_id === null) await setThreadMachine(services.store.db, thread.id, services.nodeId);
  const agent = await findAgent(services.store.db, thread.agent_id);
  // The size only counts when the workspace is made: its quota is the size's at that time.
  const size = agent ? bootSize(agent.machine_kind as MachineKind, agent.machine_size as MachineSize) : 'S';
  return services.workspaces.ensure(path.join(services.workspacesDir, thread.id), size);
}

/** `ensureWorkspace`'s directory. */
export async function ensureWorkspaceDir(
  services: Pick<Services, 'store' | 'workspaces' | 'workspacesDir' | 'nodeId'>,
  thread: Pick<ThreadRow, 'id' | 'agent_id' | 'machine_id'>,
): Promise<string> {
  return (await ensureWorkspace(services, thread)).dir;
}
