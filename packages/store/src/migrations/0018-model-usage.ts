import { type Kysely, sql } from 'kysely';

/**
 * The model gateway's ledger: one row per model call, counted to the caller's organization (and
 * thread, for a thread's token). Credits are summed from it. The usage that threads' `usage` events
 * recorded before it existed is copied in, so no organization's spending is forgotten.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('model_usage')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('thread_id', 'text')
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('input_tokens', 'integer', (c) => c.notNull())
    .addColumn('output_tokens', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('model_usage_org')
    .on('model_usage')
    .columns(['org_id', 'created_at'])
    .execute();

  const recorded = await sql<{ id: string; org_id: string; thread_id: string; data: string; ts: string }>`
    select events.id, teams.org_id, events.thread_id, events.data, events.ts
    from events
    join threads on threads.id = events.thread_id
    join agents on agents.id = threads.agent_id
    join teams on teams.id = agents.team_id
    where events.type = 'usage'`.execute(db);
  const rows = recorded.rows.map((event) => {
    const data = JSON.parse(event.data) as {
      input_tokens?: unknown;
      output_tokens?: unknown;
      model?: unknown;
    };
    const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
    return {
      id: event.id,
      org_id: event.org_id,
      thread_id: event.thread_id,
      model: typeof data.model === 'string' ? data.model : '',
      input_tokens: count(data.input_tokens),
      output_tokens: count(data.output_tokens),
      created_at: event.ts,
    };
  });
  for (let start = 0; start < rows.length; start += 500) {
    await (db as Kysely<{ model_usage: (typeof rows)[number] }>)
      .insertInto('model_usage')
      .values(rows.slice(start, start + 500))
      .execute();
  }
}
