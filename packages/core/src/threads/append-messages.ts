import { type MessageInput, newId, timestamp } from '@paddock/protocol';
import { appendEvents } from '@paddock/runtime';
import { findActiveTurns, lockThread, updateThread } from '@paddock/store';
import { hasScope, reachableThread, requireScope } from '../auth/access.ts';
import type { Ctx } from '../context.ts';
import { PaddockError, threadNotFound } from '../errors.ts';
import { admitThreadSandbox } from '../machines/live-sandboxes.ts';
import { requireMachineAlive } from '../machines/machine-lifecycle.ts';
import { deliverMessages } from './deliver-messages.ts';
import {
  ensureQueuedTurn,
  type QueuedMessage,
  queueInput,
  refuseWhileAwaitingAdoption,
} from './queue-input.ts';
import { requireInService } from './recovery.ts';
import { steeringTarget } from './steering-target.ts';

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
  const { result, events, steer } = await ctx.store.transaction(async (trx) => {
    const at = timestamp();
    const thread = await lockThread(trx, threadId, at);
    if (!thread) throw threadNotFound();
    // Only `run` asks for work; without it the messages are just kept, which a task under recovery allows.
    if (input.run) {
      requireInService(thread);
      requireMachineAlive(thread);
    }
    const active = await findActiveTurns(trx, threadId);
    const busy = active.length > 0;
    if (input.run) refuseWhileAwaitingAdoption(active, at);
    if (input.run && !busy) await admitThreadSandbox(trx, ctx.sandboxLimits, thread);
    if (!busy && !input.run) {
      const queued = input.messages.map((m) => ({ id: newId(), role: m.role, content: m.content }));
      const drafts = await deliverMessages(trx, threadId, queued, null, at);
      const events = await appendEvents(trx, threadId, null, drafts);
      return { result: { messages: queued, run_started: false }, events, steer: undefined };
    }
    // Like a task input (D5): user messages with `run` may join the running turn (native steering).
    const steerable = input.run && ctx.steering && input.messages.every((m) => m.role === 'user');
    const target = steerable ? await steeringTarget(trx, threadId) : undefined;
    const { input: queued, messages } = await queueInput(trx, thread, input.messages, at, { run: input.run });
    if (input.run && !target) {
      await ensureQueuedTurn(trx, thread, at);
      if (!busy) await updateThread(trx, threadId, { status: 'running' });
    }
    const steer = target ? { turnId: target, inputId: queued.id } : undefined;
    return { result: { messages, run_started: input.run && !busy }, events: [], steer };
  });
  ctx.events.publish(events);
  if (result.run_started) ctx.worker?.wake();
  if (steer) {
    void ctx.steering
      ?.deliver(threadId, steer.turnId, steer.inputId)
      .catch((err) => ctx.log.error({ err, thread_id: threadId }, 'steering messages failed'));
  }
  return result;
}
