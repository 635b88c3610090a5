import type { MessageInput } from '@paddock/protocol';
import { hasScope, reachableThread } from '../auth/access.ts';
import type { Ctx } from '../context.ts';
import { PaddockError } from '../errors.ts';
import { acceptInput, type InputServices } from './accept-input.ts';
import type { QueuedMessage } from './queue-input.ts';

export interface AppendResult {
  messages: QueuedMessage[];
  run_started: boolean;
}

/**
 * `POST /v2/threads/{id}/messages` (D5). On a settled thread without `run`, the messages join the
 * transcript at once. Otherwise they become an input: with `run` on a settled thread a turn starts;
 * while a turn runs they wait for the next turn, or with `run`, user messages only, join it
 * (native steering) as a task input does.
 */
export async function appendMessages(
  ctx: Ctx,
  services: InputServices,
  { threadId, input }: { threadId: string; input: { messages: MessageInput[]; run: boolean } },
): Promise<AppendResult> {
  await reachableThread(ctx.store.db, ctx.actor, threadId);
  const userOnly = input.messages.every((m) => m.role === 'user');
  if (
    !userOnly &&
    ctx.actor.credential.binding.type !== 'user' &&
    !hasScope(ctx.actor, 'messages:write_roles')
  ) {
    throw new PaddockError('scope_denied', 'PAT lacks required scope: messages:write_roles');
  }
  const accepted = await acceptInput(ctx, services, {
    threadId,
    messages: input.messages,
    run: input.run,
    steerable: userOnly,
  });
  return { messages: accepted.messages, run_started: accepted.runStarted };
}
