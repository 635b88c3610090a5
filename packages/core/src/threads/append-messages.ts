import { type MessageInput, newId, timestamp } from '@paddock/protocol';
import { appendEvents } from '@paddock/runtime';
import { findActiveTurns, lockThread, updateThread } from '@paddock/store';
import { hasScope, reachableThread, requireScope } from '../auth/access.ts';
import type { Ctx } from '../context.ts';
import { PaddockError, threadNotFound } from '../errors.ts';
import { deliverMessages } from './deliver-messages.ts';
import { ensureQueuedTurn, type QueuedMessage, queueInput } from './queue-input.ts';

export interface AppendResult {
  messages: QueuedMessage[];
  run_started: boolean;
}

/**
 * `POST /v2/threads/{id}/messages` (D5). On a settled thread without `run`, the messages join the
 * transcript at once. Otherwise they become an input: with `run` on a settled thread a turn starts;
 * while a turn runs they wait for the next turn.
 */
export async function appendMessages({
  ctx,
  threadId,
  input,
}: {
  ctx: Ctx;
  threadId: string;
  input: { messages: MessageInput[]; run: boolean };
}): Promise<AppendResult> {
  requireScope(ctx.actor, 'publish');
  await reachableThread(ctx.store.db, ctx.actor, threadId);
  const otherRoles = input.messages.some((m) => m.role !== 'user');
  if (
    otherRoles &&
    ctx.actor.credential.binding.type !== 'user' &&
    !hasScope(ctx.actor, 'messages:write_roles')
  ) {
    throw new PaddockError('scope_denied', 'PAT lacks required scope: messages:write_roles');
  }
  const { result, events } = await ctx.store.transaction(async (trx) => {
    const at = timestamp();
    const thread = await lockThread(trx, threadId, at);
    if (!thread) throw threadNotFound();
    const busy = (await findActiveTurns(trx, threadId)).length > 0;
    if (!busy && !input.run) {
      const queued = input.messages.map((m) => ({ id: newId(), role: m.role, content: m.content }));
      const drafts = await deliverMessages(trx, threadId, queued, null, at);
      const events = await appendEvents(trx, threadId, null, drafts);
      return { result: { messages: queued, run_started: false }, events };
    }
    const { messages } = await queueInput(trx, thread, input.messages, at);
    if (input.run) {
      await ensureQueuedTurn(trx, thread, at);
      if (!busy) await updateThread(trx, threadId, { status: 'running' });
    }
    return { result: { messages, run_started: input.run && !busy }, events: [] };
  });
  ctx.events.publish(events);
  if (result.run_started) ctx.worker?.wake();
  return result;
}
