import type { OutcomeStatus, StopReason } from '@paddock/protocol';
import {
  type Db,
  existingMessageIds,
  findActiveTurns,
  finishTurn,
  hasWaitingInputs,
  listInputsOfTurn,
  type ThreadRow,
} from '@paddock/store';
import { giveBackInput } from '../threads/give-back-input.ts';
import { inputMessages } from '../threads/input-receipt.ts';
import { ensureQueuedTurn } from '../threads/queue-input.ts';
import { updateThreadStatus } from '../threads/thread-status.ts';

/** How a turn ended; with the outcome it reported, this decides the thread's status (D7). */
export interface TurnEnd {
  stopReason: StopReason;
  outcome?: OutcomeStatus;
}

/**
 * Ends a turn, in the caller's transaction with the thread locked (`thread` is the locked row).
 * Every way a turn ends comes here (its settle, the sweep of an expired lease, a runner that lost
 * it, a Stop before it started), so an input that got its receipt always has a turn to take it:
 * inputs the turn claimed but never took go back to the queue, and while any input waits for a
 * turn it asked for, the next turn is queued in the same transaction.
 */
export async function endTurn(
  trx: Db,
  thread: ThreadRow,
  turnId: string,
  end: TurnEnd,
  at: string,
): Promise<void> {
  await finishTurn(trx, turnId, { status: turnStatusOf(end.stopReason), stopReason: end.stopReason, at });
  await returnUntakenInputs(trx, thread, turnId, at);
  await queueTurnForWaitingInputs(trx, thread, at);
  const active = await findActiveTurns(trx, thread.id);
  await updateThreadStatus(trx, thread, { on: 'turn_ended', othersActive: active.length > 0, ...end });
}

function turnStatusOf(stopReason: StopReason): 'completed' | 'cancelled' | 'failed' {
  if (stopReason === 'cancelled') return 'cancelled';
  return stopReason === 'error' ? 'failed' : 'completed';
}

/**
 * Queues a turn when an input of the thread waits for one (an input steered at a turn that ended
 * before it took it, or one an older version left without a turn). Answers whether it queued one.
 */
export async function queueTurnForWaitingInputs(trx: Db, thread: ThreadRow, at: string): Promise<boolean> {
  if (!(await hasWaitingInputs(trx, thread.id))) return false;
  await ensureQueuedTurn(trx, thread, at);
  return true;
}

/**
 * Inputs claimed for steering into the turn that it never took, because the server that offered them
 * died before the offer or its answer: they go back to the queue for a next turn, or are cancelled
 * when a Stop advanced the generation since. Nothing with a receipt is lost.
 */
async function returnUntakenInputs(trx: Db, thread: ThreadRow, turnId: string, at: string): Promise<void> {
  const inputs = await listInputsOfTurn(trx, thread.id, turnId);
  if (inputs.length === 0) return;
  const firstIds = inputs.map((i) => inputMessages(i)[0]!.id);
  const delivered = await existingMessageIds(trx, thread.id, firstIds);
  for (const input of inputs.filter((_, i) => !delivered.has(firstIds[i]!))) {
    await giveBackInput(trx, thread, input.id, turnId, at);
  }
}
