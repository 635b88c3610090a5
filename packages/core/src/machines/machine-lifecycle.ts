import { type MachineKind, type SandboxLifecycle, timestamp } from '@paddock/protocol';
import { type Db, fixMachineExpiry, type ThreadRow } from '@paddock/store';
import { PaddockError } from '../errors.ts';

/** The deployment's timers for the providers whose sandboxes sleep or expire (D10). */
export interface MachineTimings {
  /** sandbox_c: frozen after this long without a turn. */
  idleFreezeMs: number;
  /** Every sandbox the deployment hosts: stopped (workspace kept) after this long without a turn. */
  idleStopMs: number;
  /** sandbox_d: a sandbox lives this long from its first boot. */
  maxLifetimeMs: number;
}

/**
 * Whether the provider's idle sandboxes are stopped (workspace kept) and boot again on the next
 * turn, file read or code run: every provider the deployment hosts itself. A self-hosted runner's
 * (sandbox_e) sandboxes use its owner's machine, not the deployment's.
 */
export function stopsWhenIdle(kind: MachineKind): boolean {
  return kind !== 'sandbox_e';
}

/**
 * The lifecycle a thread's sandbox boots with. A sandbox_d thread's end is fixed at its first boot
 * and kept on the thread, so later boots (after a restart) keep the same end.
 */
export async function lifecycleFor(
  db: Db,
  kind: MachineKind,
  thread: ThreadRow,
  timings: MachineTimings,
): Promise<SandboxLifecycle | undefined> {
  if (!stopsWhenIdle(kind)) return undefined;
  const idle = {
    stopAfterMs: timings.idleStopMs,
    ...(kind === 'sandbox_c' ? { freezeAfterMs: timings.idleFreezeMs } : {}),
  };
  if (kind !== 'sandbox_d') return { idle };
  const end = thread.machine_expires_at ?? timestamp(new Date(Date.now() + timings.maxLifetimeMs));
  return { idle, expiresAt: Date.parse(`${await fixMachineExpiry(db, thread.id, end)}Z`) };
}

/** A thread whose sandbox reached the end of its lifetime: the task does not resume (spec: sandbox_d). */
export function machineExpired(thread: ThreadRow, at: string = timestamp()): boolean {
  return thread.machine_expires_at !== null && thread.machine_expires_at <= at;
}

export function requireMachineAlive(thread: ThreadRow): void {
  if (!machineExpired(thread)) return;
  throw new PaddockError(
    'task_terminal_no_machine',
    "the task's sandbox reached the end of its lifetime and the task does not resume; start a new task",
  );
}
