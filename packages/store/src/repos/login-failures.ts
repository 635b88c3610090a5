import type { Db } from '../store.ts';

/** The times of `key`'s failed logins after `since`, oldest first. */
export async function listLoginFailures(db: Db, key: string, since: string): Promise<string[]> {
  const rows = await db
    .selectFrom('login_failures')
    .select('at')
    .where('key', '=', key)
    .where('at', '>', since)
    .orderBy('at')
    .execute();
  return rows.map((r) => r.at);
}

/** Records a failed login, and drops every failure at or before `since` (they count no more). */
export async function recordLoginFailure(db: Db, key: string, at: string, since: string): Promise<void> {
  await db.deleteFrom('login_failures').where('at', '<=', since).execute();
  await db.insertInto('login_failures').values({ key, at }).execute();
}

export async function clearLoginFailures(db: Db, key: string): Promise<void> {
  await db.deleteFrom('login_failures').where('key', '=', key).execute();
}
