import { type Kysely, sql } from 'kysely';

/**
 * Whether an input asks for a turn (`run`): a message kept without `run` while a turn runs waits
 * for the next turn without asking for one. Inputs written before this column all count as asking,
 * so the repair of stranded inputs (one with no turn to take it) also covers them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('inputs')
    .addColumn('run', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
  // The repair looks for queued inputs on every sweep: only the few waiting rows are indexed.
  await db.schema
    .createIndex('inputs_waiting_idx')
    .on('inputs')
    .column('thread_id')
    .where(sql.ref('status'), '=', 'queued')
    .execute();
}
