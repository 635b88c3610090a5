import { type TurnResult, timestamp } from '@paddock/protocol';
import { appendEvents } from '@paddock/runtime';
import {
  allocatePositions,
  findTurn,
  insertMessages,
  lockThread,
  newMessageRows,
  type ThreadRow,
  type TurnRow,
} from '@paddock/store';
import type { Services } from '../context.ts';
import { endedTurnStatus } from '../threads/thread-status.ts';
import { messageText } from './conversation.ts';
import { endTurn } from './end-turn.ts';

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
  // A user message in a turn's result was steered in: it keeps the id its receipt gave it. An
  // assistant message keeps the id its `assistant.message` event named.
  const keptIds: Partial<Record<string, string[]>> = {
    user: [...(result.steeredIds ?? [])],
    assistant: [...(result.assistantIds ?? [])],
  };
  const end = { stopReason: result.stopReason, outcome: result.outcome?.status };
  const summary =
    result.outcome?.summary ?? (result.lastAssistantText.slice(0, 280) || result.error?.message || '');
  const committed = await store.transaction(async (trx) => {
    const at = timestamp();
    const locked = await lockThread(trx, thread.id, at);
    // Another server adopted the turn (this one lost its lease): the turn is theirs to settle.
    const current = await findTurn(trx, turn.id);
    if (!locked || current?.status !== 'running' || current.lease_owner !== turn.lease_owner) return [];
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
            id: keptIds[m.role]?.shift(),
            role: m.role,
            content: messageText(m),
            parts: typeof m.content === 'string' ? null : JSON.stringify(m.content),
            metadata: m.role === 'assistant' ? { model } : {},
          })),
        ),
      );
    }
    await endTurn(trx, locked, turn.id, end, at);
    return appendEvents(trx, thread.id, turn.id, [
      { type: 'turn.ended', data: { stop_reason: result.stopReason } },
      { type: 'idle', data: { status: endedTurnStatus(end.stopReason, end.outcome), summary } },
    ]);
  });
  events.publish(committed);
}

/** Why nobody will finish a running turn. */
export type AbandonCause =
  /** Its lease expired: its server died (and, on a detached runner, no server adopted it in the window). */
  | { kind: 'expired' }
  /** Its detached runner reconnected without it (a restart cut it off before it reached its sandbox). */
  | { kind: 'runner_lost'; runnerId: string }
  /** The in-process runner of its node ran it, and the node's process died: the node came back. */
  | { kind: 'owner_died' };

/** Settles a running turn nobody will finish, for `cause`, if it still stands when the turn is locked. */
export async function settleAbandonedTurn(
  { store, events }: Pick<Services, 'store' | 'events'>,
  turn: TurnRow,
  cause: AbandonCause = { kind: 'expired' },
): Promise<void> {
  const committed = await store.transaction(async (trx) => {
    const at = timestamp();
    const thread = await lockThread(trx, turn.thread_id, at);
    const current = await findTurn(trx, turn.id);
    if (!thread || current?.status !== 'running' || current.lease_owner !== turn.lease_owner) return [];
    if (cause.kind === 'expired' && (current.lease_expires_at ?? '') >= at) return [];
    if (cause.kind === 'runner_lost' && current.runner_id !== cause.runnerId) return [];
    await endTurn(trx, thread, turn.id, { stopReason: 'error' }, at);
    const error =
      cause.kind === 'runner_lost'
        ? {
            code: 'runner_lost',
            message: `runner ${cause.runnerId} reconnected without the turn: a restart cut it off before it reached its sandbox`,
          }
        : cause.kind === 'owner_died'
          ? {
              code: 'lease_expired',
              message: 'the server running this turn stopped (its process died) and came back',
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
