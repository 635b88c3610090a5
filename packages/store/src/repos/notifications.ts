import { sql } from 'kysely';
import pg from 'pg';
import type { Db } from '../store.ts';

/** PostgreSQL only: one NOTIFY on `channel` per payload, all in one statement (one transaction). */
export async function notifyAll(db: Db, channel: string, payloads: string[]): Promise<void> {
  if (payloads.length === 0) return;
  await sql`select pg_notify(${channel}, p) from unnest(${payloads}::text[]) as p`.execute(db);
}

/**
 * PostgreSQL only: a connection of its own, not the pool's, for LISTEN (a listening session must stay
 * open and be nobody else's). Unconnected; TCP keepalive on, so a dead peer is noticed.
 */
export function createListenClient(databaseUrl: string): pg.Client {
  return new pg.Client({ connectionString: databaseUrl, keepAlive: true });
}
