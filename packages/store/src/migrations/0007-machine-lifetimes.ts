import type { Kysely } from 'kysely';

/** When the thread's sandbox first booted: a provider with a lifetime (sandbox_d) counts from it. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('threads').addColumn('machine_started_at', 'text').execute();
}
