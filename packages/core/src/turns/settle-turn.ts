import { type ThreadStatus, timestamp } from '@paddock/protocol';
import { appendEvents } from '@paddock/runtime';
import {
  allocatePositions,
  type Db,
  existingMessageIds,
  findActiveTurns,
  findTurn,
  finishTurn,
  insertMessages,
  listInputsOfTurn,
  lockThread,
  newMessageRows,
  type ThreadRow,
  type TurnRow,
  updateThread,
} from '@paddock/store';
import type { Services } from '../context.ts';
import { giveBackInput } from '../threads/give-back-input.ts';
import { inputMessages } from '../threads/input-receipt.ts';
import { messageText } from './conversation.ts';
import type { TurnResult } from './sandbox-host.ts';

/**
 * Ends a turn in one transaction: its messages join the transcript, the turn ends, the thread takes
 * its status (D7; `running` again when a next turn waits), and `turn.ended` and `idle` close it.
 */
export async function settleTurn(
  { store, events }: Pick<Services, 'store' | 'events'>,
  settled: {
    turn: TurnRow;
    thread: ThreadRow;
    model: string;
    result: TurnResult;
  },
): Promise<void> {
  const { turn, thread, model, result } = settled;
  const steeredIds = [...(result.steeredIds ?? [])];
  const status: ThreadStatus =
    result.stopReason === 'cancelled'
      ? 'idle'
      : result.stopReason === 'error'
        ? 'fail'
        : (result.outcome?.status ?? 'idle');
  const summary =
    result.outcome?.summary ?? (result.lastAssistantText.slice(0, 280) || result.error?.message || '');
  const committed = await store.transaction(async (trx) => {
    const at = timestamp();
    await lockThread(trx, thread.id, at);
    // Another server adopted the turn (this one lost its lease): the turn is theirs to settle.
    const current = await findTurn(trx, turn.id);
    if (current?.status !== 'running' || current.lease_owner !== turn.lease_owner) return [];
    if (result.messages.length > 0) {
      const first = await allocatePositions(trx, thread.id, result.messages.length);
      await insertMessages(
        trx,
        newMessageRows(
          thread.id,
          turn.id,
          first,
          at,
          result.messages.map((m) => ({
            // A user message in a turn's result was steered in; it keeps the id its receipt gave it.
            id: m.role === 'user' ? steeredIds.shift() : undefined,
            role: m.role,
            content: messageText(m),
            parts: typeof m.content === 'string' ? null : JSON.stringify(m.content),
            metadata: m.role === 'assistant' ? { model } : {},
          })),
        ),
      );
    }
    const turnStatus =
      result.stopReason === 'cancelled'
        ? 'cancelled'
        : result.stopReason === 'error'
          ? 'failed'
          : 'completed';
    await finishTurn(trx, turn.id, { status: turnStatus, stopReason: result.stopReason, at });
    await returnUntakenInputs(trx, thread.id, turn.id, at);
    const next = (await findActiveTurns(trx, thread.id)).some((t) => t.status === 'queued');
    await updateThread(trx, thread.id, { status: next ? 'running' : status });
    return appendEvents(trx, thread.id, turn.id, [
      { type: 'turn.ended', data: { stop_reason: result.stopReason } },
      { type: 'idle', data: { status, summary } },
    ]);
  });
  events.publish(committed);
}

/**
 * Settles a running turn nobody will finish: its lease expired (its server died, and on a detached
 * runner no server adopted it within the window), or `lostOn` names the runner that reconnected
 * without it (a restart cut the turn off before it reached its sandbox).
 */
export async function settleAbandonedTurn(
  { store, events }: Pick<Services, 'store' | 'events'>,
  turn: TurnRow,
  lostOn?: string,
): Promise<void> {
  const committed = await store.transaction(async (trx) => {
    const at = timestamp();
    const thread = await lockThread(trx, turn.thread_id, at);
    const current = await findTurn(trx, turn.id);
    if (!thread || current?.status !== 'running' || current.lease_owner !== turn.lease_owner) return [];
    if (lostOn === undefined ? (current.lease_expires_at ?? '') >= at : current.runner_id !== lostOn)
      return [];
    await finishTurn(trx, turn.id, { status: 'failed', stopReason: 'error', at });
    await returnUntakenInputs(trx, thread.id, turn.id, at);
    const next = (await findActiveTurns(trx, thread.id)).some((t) => t.status === 'queued');
    await updateThread(trx, thread.id, { status: next ? 'running' : 'fail' });
    const error =
      lostOn !== undefined
        ? {
            code: 'runner_lost',
            message: `runner ${lostOn} reconnected without the turn: a restart cut it off before it reached its sandbox`,
          }
        : {
            code: 'lease_expired',
            message: current.runner_id
              ? `no server adopted the turn within the adoption window after its lease expired (runner ${current.runner_id} did not reconnect)`
              : 'the runner of this turn stopped renewing its lease',
          };
    return appendEvents(trx, thread.id, turn.id, [
      { type: 'error', data: { ...error, retryable: true } },
      { type: 'turn.ended', data: { stop_reason: 'error' } },
      { type: 'idle', data: { status: 'fail', summary: error.message } },
    ]);
  });
  events.publish(committed);
}

/**
 * Inputs claimed for steering into the turn that it never took, because the server that offered them
 * died before the offer or its answer: they go back to the queue for a next turn, or are cancelled
 * when a Stop advanced the generation since. Nothing with a receipt is lost.
 */
async function returnUntakenInputs(trx: Db, threadId: string, turnId: string, at: string): Promise<void> {
  const inputs = await listInputsOfTurn(trx, threadId, turnId);
  if (inputs.length === 0) return;
  const firstIds = inputs.map((i) => inputMessages(i)[0]!.id);
  const delivered = await existingMessageIds(trx, threadId, firstIds);
  const untaken = inputs.filter((_, i) => !delivered.has(firstIds[i]!));
  if (untaken.length === 0) return;
  const thread = (await lockThread(trx, threadId, at))!;
  for (const input of untaken) await giveBackInput(trx, thread, input.id, turnId, at);
}
