import { type RawBuilder, sql } from 'kysely';
import type { Db, Dialect } from '../store.ts';

/** The organization an agent belongs to (through its team). */
export async function findOrgIdOfAgent(db: Db, agentId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('agents')
    .innerJoin('teams', 'teams.id', 'agents.team_id')
    .select('teams.org_id')
    .where('agents.id', '=', agentId)
    .executeTakeFirst();
  return row?.org_id;
}

/**
 * Model tokens (input plus output) recorded in the `usage` events of every thread whose agent
 * belongs to a team of the organization.
 */
export async function sumOrgModelTokens(db: Db, dialect: Dialect, orgId: string): Promise<number> {
  const tokens = (field: string): RawBuilder<number> =>
    dialect === 'postgres'
      ? sql`coalesce((events.data::jsonb ->> ${sql.lit(field)})::bigint, 0)`
      : sql`coalesce(json_extract(events.data, ${sql.lit(`$.${field}`)}), 0)`;
  const row = await db
    .selectFrom('events')
    .innerJoin('threads', 'threads.id', 'events.thread_id')
    .innerJoin('agents', 'agents.id', 'threads.agent_id')
    .innerJoin('teams', 'teams.id', 'agents.team_id')
    .select(
      sql<string | number>`coalesce(sum(${tokens('input_tokens')} + ${tokens('output_tokens')}), 0)`.as(
        'total',
      ),
    )
    .where('teams.org_id', '=', orgId)
    .where('events.type', '=', 'usage')
    .executeTakeFirstOrThrow();
  // PostgreSQL answers a sum of bigints as a numeric string.
  return Number(row.total);
}
