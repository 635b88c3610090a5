import type { Kysely } from 'kysely';

/**
 * Until when a thread's sandbox counts as live, for the organizations' limits on live sandboxes:
 * written when a boot is admitted, renewed while a host runs it, deleted when it stops. A host
 * that dies stops renewing, so its sandboxes stop counting after one lease. A table of its own:
 * the renewals never touch (or wait on the locks of) the threads' rows.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('live_sandboxes')
    .addColumn('thread_id', 'text', (col) => col.primaryKey().references('threads.id').onDelete('cascade'))
    .addColumn('live_until', 'text', (col) => col.notNull())
    .execute();
}
