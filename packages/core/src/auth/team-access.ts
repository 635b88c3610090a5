import type { Db } from '@paddock/store';

/**
 * Whether an agent has access to a team: today, that it lives in the team. The one place that
 * decides it (orchestration members must have access to their orchestration's team), so that team
 * grants can extend it here alone.
 */
export async function agentHasTeamAccess(db: Db, agentId: string, teamId: string): Promise<boolean> {
  const row = await db
    .selectFrom('agents')
    .select('id')
    .where('id', '=', agentId)
    .where('team_id', '=', teamId)
    .executeTakeFirst();
  return row !== undefined;
}
