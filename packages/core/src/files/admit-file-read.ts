import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { type MachineKind, timestamp } from '@paddock/protocol';
import { findActiveTurns, findAgent, type ThreadRow } from '@paddock/store';
import { reachableThread } from '../auth/access.ts';
import type { Ctx, Services } from '../context.ts';
import { requireCredits } from '../credits/credit-gate.ts';
import { PaddockError } from '../errors.ts';
import { machineExpired, stopsWhenIdle } from '../machines/machine-lifecycle.ts';
import { awaitingAdoption } from '../threads/queue-input.ts';
import {
  type BootServices,
  claimSandbox,
  ensureThreadSandbox,
  type SandboxServices,
} from '../turns/thread-sandbox.ts';
import { refuseRemoteWorkspace } from './remote-workspace.ts';
import { ensureWorkspace } from './workspace-target.ts';

/** Seconds a client waits before retrying a read refused while a sandbox is provisioned. */
const bootRetryAfter = 1;
/** Seconds before retrying a read refused while a turn awaits adoption (a runner reconnects in well under that). */
const adoptionRetryAfter = 5;

/** What every file read is given: the task, and a path in its workspace. */
export interface FileRead {
  taskId: string;
  path?: string;
}

/** What a file read uses of the services: the credit gate, the workspaces, and a boot's (a sleeping sandbox wakes). */
export type FileServices = BootServices & Pick<Services, 'credits' | 'workspaces' | 'workspaceFiles'>;

/** The task's workspace on the host; `exists` is false until its first boot made it. */
export interface Workspace {
  dir: string;
  exists: boolean;
}

/**
 * Admits a read of the task's files: the thread must be reachable (no scope beyond that, as for
 * every read); then, per the spec's file read errors, in this order: a task nothing will
 * provision again (retired, or its provider's sandbox expired) is 409 `task_terminal_no_machine`;
 * a task whose files live on a self-hosted runner (sandbox_e) is 409 `files_on_remote_runner`;
 * a payer the credit gate refuses is 402 `credits_exhausted`; a running turn awaiting adoption is
 * 409 `task_run_busy`; a sandbox being provisioned (its workspace not made yet while a turn waits
 * to boot it, or a boot under way) is 409 `machine_not_ready`. Reads write nothing.
 */
export async function admitFileRead(ctx: Ctx, services: FileServices, taskId: string): Promise<Workspace> {
  const at = timestamp(new Date(ctx.clock.now()));
  const thread = await reachableThread(ctx.store.db, ctx.actor, taskId);
  if (thread.recovery_state === 'retired' || machineExpired(thread, at)) {
    throw new PaddockError(
      'task_terminal_no_machine',
      'nothing will provision a machine for this task again; do not retry',
    );
  }
  await refuseRemoteWorkspace(ctx.store.db, thread);
  await requireCredits(ctx, services, thread.agent_id);
  const active = await findActiveTurns(ctx.store.db, thread.id);
  if (awaitingAdoption(active, at)) {
    throw new PaddockError(
      'task_run_busy',
      "the task's running turn is awaiting adoption after a control-plane restart; retry",
      { retryAfter: adoptionRetryAfter },
    );
  }
  const dir = join(services.workspacesDir, thread.id);
  const exists = await stat(dir).then(
    (s) => s.isDirectory(),
    () => false,
  );
  // The workspace and boot helpers take the store and log with the services (the turn executor has no ctx).
  const host = { ...services, store: ctx.store, log: ctx.log };
  // Its volume is mounted again if nothing has since the server started.
  if (exists) await ensureWorkspace(host, thread);
  if ((!exists && active.length > 0) || services.sandboxes.isBooting(thread.id)) {
    throw new PaddockError('machine_not_ready', "the task's sandbox is being provisioned; retry", {
      retryAfter: bootRetryAfter,
    });
  }
  if (exists && active.length === 0 && !services.sandboxes.isRunning(thread.id))
    await wakeSleeper(host, thread);
  return { dir, exists };
}

/**
 * A task whose sandbox stopped while idle resumes on a file read (spec, sandbox_c; every provider
 * that stops idle sandboxes does the same): the read starts the boot and answers 409
 * `machine_not_ready` until it is up; the workspace itself was kept.
 */
async function wakeSleeper(services: SandboxServices, thread: ThreadRow): Promise<void> {
  const agent = await findAgent(services.store.db, thread.agent_id);
  if (!agent || !stopsWhenIdle(agent.machine_kind as MachineKind)) return;
  // Refused here (429) rather than in the background, where the read would wait for it forever.
  await claimSandbox(services, thread, agent.machine_kind as MachineKind);
  void ensureThreadSandbox(services, thread, agent).catch((err) =>
    services.log.warn({ err, thread_id: thread.id }, 'waking a sleeping sandbox failed'),
  );
  throw new PaddockError('machine_not_ready', "the task's sandbox is waking up; retry", {
    retryAfter: bootRetryAfter,
  });
}
