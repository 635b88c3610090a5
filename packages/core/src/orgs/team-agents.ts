import type { TeamAgent } from '@paddock/protocol';
import { type Db, findTeam, findTeamRole, hasTeamGrant, listTeamGrantedAgents } from '@paddock/store';
import { controlAgentRecords } from '../agents/control-agent.ts';
import type { Ctx } from '../context.ts';
import { PaddockError } from '../errors.ts';
import { orgRoleOf, teamNotFound } from './orgs.ts';

/**
 * `GET /orgs/{org_id}/teams/{team_id}/agents` (spec rule 1): everything granted to the team, other
 * members' agents and agents granted from other teams included, newest grant first, at most
 * `limit`. The caller must belong to the organization (else 404) and to the team (else 403). The
 * route refuses agent- and thread-bound credentials before this runs.
 */
export async function listTeamAgents(
  ctx: Ctx,
  { orgId, teamId, limit }: { orgId: string; teamId: string; limit: number },
): Promise<{ items: TeamAgent[] }> {
  const { db } = ctx.store;
  await orgRoleOf(db, ctx.actor.userId, orgId);
  const team = await findTeam(db, teamId);
  if (team?.org_id !== orgId) throw teamNotFound();
  if (!(await findTeamRole(db, teamId, ctx.actor.userId)))
    throw new PaddockError('forbidden', 'the caller is not a member of this team');
  const rows = await listTeamGrantedAgents(db, teamId, limit);
  const records = await controlAgentRecords(db, rows);
  return { items: records.map((record, i) => ({ ...record, granted_at: rows[i]!.granted_at })) };
}

/** Whether the agent has access to the team: it is granted to it (its own team always is). */
export function agentHasTeamAccess(db: Db, agentId: string, teamId: string): Promise<boolean> {
  return hasTeamGrant(db, teamId, agentId);
}
