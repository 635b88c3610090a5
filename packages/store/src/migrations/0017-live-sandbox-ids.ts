import type { Kysely } from 'kysely';

/**
 * Which sandbox a thread's live sandbox is, for the task record (`sandbox_id`, `machine_id`): set
 * once a boot is up, cleared when the next boot is admitted; null until then.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('live_sandboxes').addColumn('sandbox_id', 'text').execute();
  await db.schema.alterTable('live_sandboxes').addColumn('machine_id', 'text').execute();
}
