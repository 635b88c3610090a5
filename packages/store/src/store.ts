import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, type Transaction } from 'kysely';
import pg from 'pg';
import { migrateToLatest } from './migrate.ts';
import type { Database } from './schema.ts';
import { withStatementCache } from './sqlite-statement-cache.ts';

export type Dialect = 'sqlite' | 'postgres';
/** A handle queries run on: the store itself or an open transaction. */
export type Db = Kysely<Database> | Transaction<Database>;

export interface Store {
  readonly db: Kysely<Database>;
  readonly dialect: Dialect;
  /** Runs `fn` in one transaction: every write that spans rows commits whole or not at all. */
  transaction<T>(fn: (trx: Transaction<Database>) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface StoreOptions {
  /** A `postgres://` URL selects PostgreSQL; absent means SQLite in `dataDir`. */
  databaseUrl?: string;
  dataDir: string;
}

export function isPostgresUrl(url: string | undefined): url is string {
  return url !== undefined && /^postgres(ql)?:\/\//.test(url);
}

export async function openStore(options: StoreOptions): Promise<Store> {
  const dialect: Dialect = isPostgresUrl(options.databaseUrl) ? 'postgres' : 'sqlite';
  const db = new Kysely<Database>({
    dialect: dialect === 'postgres' ? postgresDialect(options.databaseUrl!) : sqliteDialect(options.dataDir),
  });
  await migrateToLatest(db as Kysely<unknown>);
  return {
    db,
    dialect,
    transaction: (fn) => db.transaction().execute(fn),
    close: () => db.destroy(),
  };
}

function sqliteDialect(dataDir: string): SqliteDialect {
  mkdirSync(dataDir, { recursive: true });
  const sqlite = new SqliteDatabase(join(dataDir, 'paddock.db'));
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  return new SqliteDialect({ database: withStatementCache(sqlite) });
}

function postgresDialect(url: string): PostgresDialect {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  // An idle connection the server drops (a restart, a terminated backend) must not crash the
  // process: pg emits it on the pool, and the next checkout opens a fresh connection.
  pool.on('error', () => {});
  return new PostgresDialect({ pool });
}
