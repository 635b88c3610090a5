import { randomBytes } from 'node:crypto';
import pg from 'pg';

export type TestDatabase = { name: 'sqlite' } | { name: 'postgres'; adminUrl: string };

/**
 * The databases every store and API suite runs on: SQLite always, PostgreSQL when
 * PADDOCK_TEST_DATABASE_URL names a server (CI sets it).
 */
export function testDatabases(): TestDatabase[] {
  const url = process.env.PADDOCK_TEST_DATABASE_URL;
  return url ? [{ name: 'sqlite' }, { name: 'postgres', adminUrl: url }] : [{ name: 'sqlite' }];
}

/** A fresh PostgreSQL database for one test server; dropped again by the returned function. */
export async function createPostgresDatabase(
  adminUrl: string,
): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `paddock_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
