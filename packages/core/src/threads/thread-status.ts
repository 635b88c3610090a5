import type { OutcomeStatus, StopReason, ThreadStatus } from '@paddock/protocol';
import { type Db, setThreadStatus } from '@paddock/store';

/** A new thread's status: `running` when its first input queued a turn. */
export function newThreadStatus(turnQueued: boolean): 'running' | 'idle' {
  return turnQueued ? 'running' : 'idle';
}

/**
 * What changed a thread's status. `turn_active`: a turn of it was queued or started (an input
 * accepted with `run`, an input given back to the queue, a repair, a turn that starts).
 * `turn_ended`: one of its turns ended (settled, abandoned, or cancelled before it started), and
 * `othersActive` says whether another turn of it is still running or queued. `stop`: a Stop took
 * effect, `turnRunning` whether a running turn was asked to cancel.
 */
export type StatusChange =
  | { on: 'turn_active' }
  | { on: 'turn_ended'; othersActive: boolean; stopReason: StopReason; outcome?: OutcomeStatus }
  | { on: 'stop'; turnRunning: boolean };

/**
 * A thread's status (D7), the one rule: `running` from the moment a turn is queued until the last
 * one ends; then what that turn left. A Stop leaves a running turn to its end; with none running,
 * a thread it took a queued turn from is `idle` and a settled one keeps its status.
 */
export function nextThreadStatus(current: string, change: StatusChange): ThreadStatus {
  switch (change.on) {
    case 'turn_active':
      return 'running';
    case 'turn_ended':
      return change.othersActive ? 'running' : endedTurnStatus(change.stopReason, change.outcome);
    case 'stop':
      if (change.turnRunning) return 'running';
      return current === 'running' ? 'idle' : (current as ThreadStatus);
  }
}

/** What a turn's end leaves (its `idle` event's status): interrupted `idle`, errored `fail`, else its outcome or `idle`. */
export function endedTurnStatus(stopReason: StopReason, outcome?: OutcomeStatus): ThreadStatus {
  if (stopReason === 'cancelled') return 'idle';
  if (stopReason === 'error') return 'fail';
  return outcome ?? 'idle';
}

/**
 * Writes the thread's status after `change`; every write of `threads.status` after its insert goes
 * through here. `thread` is the row as locked by the caller's transaction. Answers the status.
 */
export async function updateThreadStatus(
  trx: Db,
  thread: { id: string; status: string },
  change: StatusChange,
): Promise<ThreadStatus> {
  const status = nextThreadStatus(thread.status, change);
  await setThreadStatus(trx, thread.id, status);
  return status;
}
