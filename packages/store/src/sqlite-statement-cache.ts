import type { SqliteDatabase, SqliteStatement } from 'kysely';

/**
 * Kysely prepares every query anew; better-sqlite3 spends more time preparing than running the
 * small queries a request makes. This keeps prepared statements by SQL text. A statement is
 * safe to reuse because Kysely runs each one to completion before the next (one connection).
 */
export function withStatementCache(database: SqliteDatabase, capacity = 500): SqliteDatabase {
  const statements = new Map<string, SqliteStatement>();
  return {
    close: () => database.close(),
    prepare(sql) {
      let statement = statements.get(sql);
      if (statement) {
        // Refresh its place so the least recently used statement is the one evicted.
        statements.delete(sql);
      } else {
        statement = database.prepare(sql);
        if (statements.size >= capacity) statements.delete(statements.keys().next().value!);
      }
      statements.set(sql, statement);
      return statement;
    },
  };
}
