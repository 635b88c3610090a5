import type { Selectable } from 'kysely';
import type { AgentsTable } from '../schema.ts';
import type { Db } from '../store.ts';

/** Grants an agent to a team; granting it again keeps the first grant. */
export async function grantAgentToTeam(
  db: Db,
  grant: { team_id: string; agent_id: string; granted_at: string },
): Promise<void> {
  await db
    .insertInto('team_agent_grants')
    .values(grant)
    .onConflict((oc) => oc.columns(['team_id', 'agent_id']).doNothing())
    .execute();
}

export async function hasTeamGrant(db: Db, teamId: string, agentId: string): Promise<boolean> {
  const row = await db
    .selectFrom('team_agent_grants')
    .select('agent_id')
    .where('team_id', '=', teamId)
    .where('agent_id', '=', agentId)
    .executeTakeFirst();
  return row !== undefined;
}

/** The agents granted to a team, newest grant first (ties by agent id, newest first too). */
export function listTeamGrantedAgents(
  db: Db,
  teamId: string,
  limit: number,
): Promise<(Selectable<AgentsTable> & { granted_at: string })[]> {
  return db
    .selectFrom('team_agent_grants as g')
    .innerJoin('agents as a', 'a.id', 'g.agent_id')
    .selectAll('a')
    .select('g.granted_at')
    .where('g.team_id', '=', teamId)
    .orderBy('g.granted_at', 'desc')
    .orderBy('g.agent_id', 'desc')
    .limit(limit)
    .execute();
}
