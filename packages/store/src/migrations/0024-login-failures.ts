import type { Kysely } from 'kysely';

/** Failed logins in the database (issue 18): the lockout counts them across every server node. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('login_failures')
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('login_failures_key_at').on('login_failures').columns(['key', 'at']).execute();
  await db.schema.createIndex('login_failures_at').on('login_failures').column('at').execute();
}
