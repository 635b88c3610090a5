import type { Kysely } from 'kysely';

/**
 * What a Stop must know about a thread and its running turn beyond 0001. SQLite adds one column
 * per ALTER TABLE, so each column is its own statement.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // `finalizing` from the moment a turn's result is back until its settle commits.
  await db.schema
    .alterTable('turns')
    .addColumn('phase', 'text', (c) => c.notNull().defaultTo('running'))
    .execute();
  // 0 when the runtime that runs the turn reported, as it started, that it cannot interrupt it.
  await db.schema
    .alterTable('turns')
    .addColumn('interruptible', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
  // Set by an operator: null, `quarantined` or `retired`.
  await db.schema.alterTable('threads').addColumn('recovery_state', 'text').execute();
  await db.schema
    .alterTable('threads')
    .addColumn('replacement_task_id', 'text', (c) => c.references('threads.id'))
    .execute();
}
