import { chmodSync, closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, type Transaction } from 'kysely';
import pg from 'pg';
import { migrateToLatest } from './migrate.ts';
import type { Database } from './schema.ts';
import { withStatementCache } from './sqlite-statement-cache.ts';
import { WriteCount } from './write-count.ts';

export type Dialect = 'sqlite' | 'postgres';
/** A handle queries run on: the store itself or an open transaction. */
export type Db = Kysely<Database> | Transaction<Database>;

export interface Store {
  readonly db: Kysely<Database>;
  readonly dialect: Dialect;
  /** Runs `fn` in one transaction: every write that spans rows commits whole or not at all. */
  transaction<T>(fn: (trx: Transaction<Database>) => Promise<T>): Promise<T>;
  /**
   * On SQLite: a version of the credential tables (`tokens`, `team_members`) that changes whenever
   * they may have: on this store's own writes to them (`WriteCount`), and on any commit by another
   * connection to the file (`PRAGMA data_version`: another node on the same data dir). A cache of
   * credentials keeps what it read while the version read before it stands. Absent on PostgreSQL,
   * where other nodes' commits cannot be seen without a query; undefined once the store is closed.
   */
  readonly credentialVersion?: () => string | undefined;
  close(): Promise<void>;
}

export interface StoreOptions {
  /** A `postgres://` URL selects PostgreSQL; absent means SQLite in `dataDir`. */
  databaseUrl?: string;
  dataDir: string;
  /** Seals secret values an older version stored in plain text (the deployment's SecretBox). */
  sealSecret?: (plaintext: string) => string;
}

export function isPostgresUrl(url: string | undefined): url is string {
  return url !== undefined && /^postgres(ql)?:\/\//.test(url);
}

export async function openStore(options: StoreOptions): Promise<Store> {
  const dialect: Dialect = isPostgresUrl(options.databaseUrl) ? 'postgres' : 'sqlite';
  if (dialect === 'postgres') {
    const db = new Kysely<Database>({ dialect: postgresDialect(options.databaseUrl!) });
    await migrateToLatest(db as Kysely<unknown>, options.sealSecret);
    return { db, dialect, transaction: (fn) => db.transaction().execute(fn), close: () => db.destroy() };
  }
  const sqlite = openSqlite(options.dataDir);
  const credentialWrites = new WriteCount(['tokens', 'team_members']);
  const db = new Kysely<Database>({
    dialect: new SqliteDialect({ database: withStatementCache(sqlite) }),
    plugins: [credentialWrites],
  });
  await migrateToLatest(db as Kysely<unknown>, options.sealSecret);
  const dataVersion = sqlite.prepare('PRAGMA data_version').pluck();
  return {
    db,
    dialect,
    transaction: (fn) => db.transaction().execute(fn),
    credentialVersion: () => (sqlite.open ? `${credentialWrites.count}:${dataVersion.get()}` : undefined),
    close: () => db.destroy(),
  };
}

function openSqlite(dataDir: string): SqliteDatabase.Database {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = join(dataDir, 'paddock.db');
  ownerOnly(file);
  const sqlite = new SqliteDatabase(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  return sqlite;
}

/**
 * The database holds token hashes and sealed secrets: only the server's user may read it. SQLite
 * creates its -wal and -shm files with the database file's mode, so the file is made (or narrowed
 * to) 0600 before it is opened; files an older version left wider are narrowed too.
 */
function ownerOnly(file: string): void {
  closeSync(openSync(file, 'a', 0o600));
  for (const path of [file, `${file}-wal`, `${file}-shm`]) {
    try {
      chmodSync(path, 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
}

function postgresDialect(url: string): PostgresDialect {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  // An idle connection the server drops (a restart, a terminated backend) must not crash the
  // process: pg emits it on the pool, and the next checkout opens a fresh connection.
  pool.on('error', () => {});
  return new PostgresDialect({ pool });
}
