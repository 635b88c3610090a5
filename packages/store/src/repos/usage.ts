import type { Selectable } from 'kysely';
import { sql } from 'kysely';
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

/** Tokens as a report counts them; PostgreSQL answers sums of integers as numeric strings. */
export interface TokenCounts {
  input_tokens: number;
  output_tokens: number;
}

const counts = (row: { input: string | number | null; output: string | number | null }): TokenCounts => ({
  input_tokens: Number(row.input ?? 0),
  output_tokens: Number(row.output ?? 0),
});

/**
 * The organization's model tokens since `from` (a D3 timestamp): by UTC day, by agent (calls made
 * with a thread's token) and for the threads that used the most.
 */
export async function orgUsageReport(db: Db, orgId: string, from: string, topThreads: number) {
  const since = db
    .selectFrom('model_usage')
    .where('model_usage.org_id', '=', orgId)
    .where('model_usage.created_at', '>=', from);
  const input = sql<string | number | null>`sum(model_usage.input_tokens)`.as('input');
  const output = sql<string | number | null>`sum(model_usage.output_tokens)`.as('output');
  const day = sql<string>`substr(model_usage.created_at, 1, 10)`;
  const days = await since
    .select([day.as('day'), input, output])
    .groupBy(day)
    .orderBy(day)
    .execute();
  const agents = await since
    .innerJoin('threads', 'threads.id', 'model_usage.thread_id')
    .select(['threads.agent_id', input, output])
    .groupBy('threads.agent_id')
    .execute();
  const total = sql<number>`sum(model_usage.input_tokens + model_usage.output_tokens)`;
  const threads = await since
    .innerJoin('threads', 'threads.id', 'model_usage.thread_id')
    .select(['threads.id as thread_id', 'threads.agent_id', 'threads.title', input, output])
    .groupBy(['threads.id', 'threads.agent_id', 'threads.title'])
    .orderBy(total, 'desc')
    .limit(topThreads)
    .execute();
  return {
    days: days.map((r) => ({ date: r.day, ...counts(r) })),
    agents: agents.map((r) => ({ agent_id: r.agent_id, ...counts(r) })),
    threads: threads.map((r) => ({
      thread_id: r.thread_id,
      agent_id: r.agent_id,
      title: r.title,
      ...counts(r),
    })),
  };
}
