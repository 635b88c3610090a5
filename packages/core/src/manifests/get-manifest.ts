import type { Manifest } from '@paddock/protocol';
import { reachableAgent } from '../auth/access.ts';
import type { Ctx } from '../context.ts';
import { loadManifest, loadRevision } from './load-manifest.ts';

/** `GET /agents/{agent_id}/manifest`. */
export async function getManifest({ ctx, agentId }: { ctx: Ctx; agentId: string }): Promise<Manifest> {
  const agent = await reachableAgent(ctx.store.db, ctx.actor, agentId);
  return loadManifest(ctx, ctx.store.db, agent);
}

/** `GET /agents/{agent_id}/revision`: the drift check. */
export async function getRevision({
  ctx,
  agentId,
}: {
  ctx: Ctx;
  agentId: string;
}): Promise<{ revision: string }> {
  const agent = await reachableAgent(ctx.store.db, ctx.actor, agentId);
  return { revision: await loadRevision(ctx, ctx.store.db, agent) };
}
