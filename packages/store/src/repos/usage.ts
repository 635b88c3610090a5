import type { Selectable } from 'kysely';
import type { ModelUsageTable } from '../schema.ts';
import type { Db } from '../store.ts';

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

/** Where a model call made with a thread's token is counted: its organization and its running turn. */
export async function findUsageTargetOfThread(
  db: Db,
  threadId: string,
): Promise<{ orgId: string; turnId: string | null } | undefined> {
  const row = await db
    .selectFrom('threads')
    .innerJoin('agents', 'agents.id', 'threads.agent_id')
    .innerJoin('teams', 'teams.id', 'agents.team_id')
    .leftJoin('turns', (join) =>
      join.onRef('turns.thread_id', '=', 'threads.id').on('turns.status', '=', 'running'),
    )
    .select(['teams.org_id', 'turns.id as turn_id'])
    .where('threads.id', '=', threadId)
    .executeTakeFirst();
  return row && { orgId: row.org_id, turnId: row.turn_id };
}

export async function insertModelUsage(db: Db, row: Selectable<ModelUsageTable>): Promise<void> {
  await db.insertInto('model_usage').values(row).execute();
}

/** Model tokens (input plus output) of every gateway call the organization paid for. */
export async function sumOrgModelTokens(db: Db, orgId: string): Promise<number> {
  const row = await db
    .selectFrom('model_usage')
    .select((eb) =>
      eb.fn
        .coalesce(eb.fn.sum<string | number>(eb('input_tokens', '+', eb.ref('output_tokens'))), eb.lit(0))
        .as('total'),
    )
    .where('org_id', '=', orgId)
    .executeTakeFirstOrThrow();
  // PostgreSQL answers a sum of integers as a numeric string.
  return Number(row.total);
}
