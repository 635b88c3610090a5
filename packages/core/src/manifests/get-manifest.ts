import type { Manifest } from '@paddock/protocol';
import { reachableAgent } from '../auth/access.ts';
import type { Ctx, Services } from '../context.ts';
import { loadManifest, loadRevision } from './load-manifest.ts';

/** `GET /agents/{agent_id}/manifest`. */
export async function getManifest(
  ctx: Ctx,
  services: Pick<Services, 'secrets'>,
  { agentId }: { agentId: string },
): Promise<Manifest> {
  const agent = await reachableAgent(ctx.store.db, ctx.actor, agentId);
  return loadManifest(services, ctx.store.db, agent);
}

/** `GET /agents/{agent_id}/revision`: the drift check. */
export async function getRevision(
  ctx: Ctx,
  services: Pick<Services, 'secrets'>,
  { agentId }: { agentId: string },
): Promise<{ revision: string }> {
  const agent = await reachableAgent(ctx.store.db, ctx.actor, agentId);
  return { revision: await loadRevision(services, ctx.store.db, agent) };
}
