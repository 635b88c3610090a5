import type { MachineCapabilities } from '@paddock/protocol';
import { findDefaultTeamId, findTeamOrgId } from '@paddock/store';
import type { Ctx, Services } from '../context.ts';

/**
 * D12: every provider the service knows, with what it offers and whether the caller may create
 * agents on it (issue 10: switched off or outside the caller's rollout is `available: false`, with
 * the reason agent create would give). The rollout is judged for the organization of the caller's
 * default team, where `POST /v2/threads` creates an inline agent.
 */
export async function machineCapabilities(
  ctx: Ctx,
  services: Pick<Services, 'providers'>,
): Promise<MachineCapabilities> {
  const { db } = ctx.store;
  const teamId = await findDefaultTeamId(db, ctx.actor.userId);
  const orgId = (teamId && (await findTeamOrgId(db, teamId))) || '';
  return services.providers.capabilities({ userId: ctx.actor.userId, orgId });
}
