import type { Kysely } from 'kysely';

/**
 * Login sessions (D13): the built-in identity provider's signing keys, shared by every server node
 * (the private key sealed with the deployment's secret key), and users known by an external OpenID
 * Connect issuer's subject.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('signing_keys')
    .addColumn('kid', 'text', (c) => c.primaryKey())
    .addColumn('public_jwk', 'text', (c) => c.notNull())
    .addColumn('private_jwk_sealed', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.alterTable('users').addColumn('issuer', 'text').execute();
  await db.schema.alterTable('users').addColumn('subject', 'text').execute();
  await db.schema
    .createIndex('users_issuer_subject')
    .on('users')
    .columns(['issuer', 'subject'])
    .unique()
    .execute();
  await db.schema.createIndex('tokens_user_kind').on('tokens').columns(['user_id', 'kind']).execute();
}
