import type { Kysely } from 'kysely';

/**
 * An agent's schedules (issue 16 §3): a cron expression in an IANA time zone and the input each
 * due time starts a thread with. `next_run_at` (a UTC D3 timestamp) is both the due time and the
 * claim: a node fires a schedule only by moving it on from the value it read, so one node wins.
 * `user_id` is who made it: a fire acts for that user, through an agent-bound token. `name` is
 * unique per agent: a manifest's `schedule` component is named by it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('schedules')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('cron', 'text', (c) => c.notNull())
    .addColumn('time_zone', 'text', (c) => c.notNull())
    .addColumn('input', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('next_run_at', 'text', (c) => c.notNull())
    .addColumn('last_run_at', 'text')
    .addColumn('last_thread_id', 'text')
    .execute();
  await db.schema
    .createIndex('schedules_agent_name_idx')
    .unique()
    .on('schedules')
    .columns(['agent_id', 'name'])
    .execute();
  await db.schema
    .createIndex('schedules_due_idx')
    .on('schedules')
    .columns(['enabled', 'next_run_at'])
    .execute();
}
