import type { Kysely } from 'kysely';

/**
 * Until when the thread's sandbox counts as live (an organization's limit on live sandboxes): set
 * when it boots, renewed while its host runs it, cleared when it stops. A host that dies stops
 * renewing, so its sandboxes stop counting after one lease.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('threads').addColumn('sandbox_live_until', 'text').execute();
}
