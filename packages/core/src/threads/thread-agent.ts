import { findAgent, findThread } from '@paddock/store';
import type { Ctx, Services } from '../context.ts';
import { threadNotFound } from '../errors.ts';

/**
 * The model and instructions of a thread's agent as it is now: what the gateway's `thread` model id
 * stands for (see `threadAgentRouter`), as a turn of the thread would be given them.
 */
export async function threadAgentModel(
  ctx: Pick<Ctx, 'store'>,
  services: Pick<Services, 'defaultModel'>,
  threadId: string,
): Promise<{ model: string; instructions: string | undefined }> {
  const thread = await findThread(ctx.store.db, threadId);
  const agent = thread && (await findAgent(ctx.store.db, thread.agent_id));
  if (!agent) throw threadNotFound();
  return { model: agent.model ?? services.defaultModel, instructions: agent.instructions ?? undefined };
}
