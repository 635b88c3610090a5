import { accessSync, constants, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Config, StartupError } from './config.ts';

/**
 * The start-up failures a user fixes by changing a setting (a busy port, a data dir that cannot be
 * written, a database that cannot be reached), turned into one line that names the setting. Any
 * other error is returned as it is: a bug, whose stack must be seen.
 */

const code = (error: unknown): string | undefined => {
  const value = (error as { code?: unknown } | undefined)?.code;
  return typeof value === 'string' ? value : undefined;
};

/** The reason as one line: a driver's message, else its code (an AggregateError of refused addresses has none). */
const reason = (error: unknown): string =>
  (error instanceof Error && error.message.split('\n')[0]) || code(error) || String(error);

/** Why the server cannot listen on HOST:PORT. */
export function listenFailure(error: unknown, config: Pick<Config, 'HOST' | 'PORT'>): unknown {
  const where = `port ${config.PORT} on ${config.HOST}`;
  switch (code(error)) {
    case 'EADDRINUSE':
      return new StartupError(`${where} is in use (PORT sets another)`);
    case 'EACCES':
      return new StartupError(`${where} needs privileges this user lacks (PORT sets another)`);
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new StartupError(`${config.HOST} is not an address of this machine (HOST sets another)`);
    default:
      return error;
  }
}

/** Makes the data dir (0700) and checks that this user can write in it. */
export function prepareDataDir(dataDir: string): void {
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    accessSync(dataDir, constants.W_OK | constants.X_OK);
  } catch (error) {
    throw dataDirFailure(error, dataDir);
  }
}

/** A file system error in the data dir (one with an errno code), as one line. */
export function dataDirFailure(error: unknown, dataDir: string): unknown {
  if (!/^E[A-Z]+$/.test(code(error) ?? '')) return error;
  return new StartupError(
    `cannot write in the data directory ${dataDir}: ${reason(error)} (PADDOCK_DATA_DIR sets another)`,
  );
}

/**
 * The codes of a database that cannot be opened: a connection refused or not resolved (errno codes),
 * a URL pg cannot parse, PostgreSQL's connection, authentication or unknown-database errors
 * (SQLSTATE classes 08 and 28, 3D000), a SQLite file that is not a database or cannot be opened. A
 * failing migration's SQL error is none of these.
 */
const unopenable =
  /^(E[A-Z]+|ERR_INVALID_URL|08...|28...|3D000|SQLITE_(CANTOPEN|NOTADB|CORRUPT|READONLY|PERM))$/;

/** The store could not be opened; the driver's error is the cause of a failed migration's. */
export function databaseFailure(error: unknown, config: Pick<Config, 'DATABASE_URL' | 'dataDir'>): unknown {
  const driverError = error instanceof Error && error.cause !== undefined ? error.cause : error;
  if (!unopenable.test(code(driverError) ?? '')) return error;
  const database = config.DATABASE_URL?.startsWith('postgres')
    ? `the database ${withoutPassword(config.DATABASE_URL)}: ${reason(driverError)} (DATABASE_URL sets another)`
    : `the SQLite database ${join(config.dataDir, 'paddock.db')}: ${reason(driverError)} (PADDOCK_DATA_DIR sets another)`;
  return new StartupError(`cannot open ${database}`);
}

/** The URL with its password (if any) left out: the line goes to a terminal or a log. */
function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    if (parsed.searchParams.has('password')) parsed.searchParams.set('password', '***');
    return parsed.toString();
  } catch {
    return 'in DATABASE_URL';
  }
}
