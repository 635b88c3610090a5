import { newId, timestamp } from '@paddock/protocol';
import { findDefaultTeamId, findTeamOrgId, findUsageTargetOfThread, insertModelUsage } from '@paddock/store';
import type { Actor, Ctx, Services, SystemActor } from '../context.ts';

export interface ModelUsage {
  model: string;
  inputTokens: number;
  outputTokens: number;
}

/**
 * Counts one model call of the gateway, whatever its dialect: to the organization's credits (the
 * ledger), and, when a thread's token made it, to the thread as a `usage` event of its running turn.
 * A personal token's call is counted to the caller's default team's organization.
 */
export async function recordModelUsage(
  ctx: Ctx,
  services: Pick<Services, 'events'>,
  usage: ModelUsage,
): Promise<void> {
  const binding = ctx.actor.credential.binding;
  const threadId = binding.type === 'thread' ? binding.threadId : null;
  const target = threadId
    ? await findUsageTargetOfThread(ctx.store.db, threadId)
    : { orgId: await defaultOrgOf(ctx), turnId: null };
  await countUsage(ctx, services, { ...target, threadId }, usage);
}

/**
 * Counts one model call of a thread's turn made in the runner's own process (Paddock's loops call the
 * model router there, not the gateway): as a call of the thread's token through the gateway counts.
 */
export async function recordThreadModelUsage(
  ctx: Ctx<SystemActor>,
  services: Pick<Services, 'events'>,
  threadId: string,
  usage: ModelUsage,
): Promise<void> {
  const target = await findUsageTargetOfThread(ctx.store.db, threadId);
  await countUsage(ctx, services, { ...target, threadId }, usage);
}

async function countUsage(
  ctx: Ctx<Actor | SystemActor>,
  services: Pick<Services, 'events'>,
  target: { orgId?: string | null; turnId?: string | null; threadId: string | null },
  usage: ModelUsage,
): Promise<void> {
  const { threadId } = target;
  if (!target?.orgId) {
    ctx.log.warn({ model: usage.model }, 'model usage not counted: the caller belongs to no organization');
    return;
  }
  await insertModelUsage(ctx.store.db, {
    id: newId(),
    org_id: target.orgId,
    thread_id: threadId,
    model: usage.model,
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    created_at: timestamp(new Date(ctx.clock.now())),
  });
  if (threadId) {
    await services.events.append(threadId, target.turnId ?? null, [
      {
        type: 'usage',
        data: { input_tokens: usage.inputTokens, output_tokens: usage.outputTokens, model: usage.model },
      },
    ]);
  }
}

/** The organization of the caller's default team (the one their agents land in). */
async function defaultOrgOf(ctx: Ctx): Promise<string | undefined> {
  const teamId = await findDefaultTeamId(ctx.store.db, ctx.actor.userId);
  return teamId && findTeamOrgId(ctx.store.db, teamId);
}
