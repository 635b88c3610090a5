import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';

/** What pg, its pool and Kysely throw, as plain errors, when a connection fails, drops or times out. */
const connectionFailure =
  /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client (has encountered a connection error|was closed) and is not queryable|Cannot use a pool after calling end on the pool|driver has already been destroyed)/;

/**
 * Whether `error` is the database failing rather than a bug in the code that called it: an error
 * SQLite or PostgreSQL answered (a busy or locked database, a statement timeout, a dropped
 * backend), a connection that was refused, reset or timed out, or a store already closed.
 */
export function isStoreFailure(error: unknown): boolean {
  if (error instanceof SqliteDatabase.SqliteError || error instanceof pg.DatabaseError) return true;
  if (!(error instanceof Error)) return false;
  const code = (error as NodeJS.ErrnoException).code;
  return (typeof code === 'string' && /^E[A-Z]+$/.test(code)) || connectionFailure.test(error.message);
}
