import type { Kysely } from 'kysely';

/**
 * When the thread's sandbox ends for good, for providers whose sandboxes have a lifetime
 * (sandbox_d): set at its first boot; afterwards the task does not resume.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('threads').addColumn('machine_expires_at', 'text').execute();
}
