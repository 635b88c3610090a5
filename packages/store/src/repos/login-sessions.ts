import type { Selectable } from 'kysely';
import type { LoginSessionsTable } from '../schema.ts';
import type { Db } from '../store.ts';

export type LoginSessionRow = Selectable<LoginSessionsTable>;

export async function insertLoginSession(db: Db, row: LoginSessionRow): Promise<void> {
  await db.insertInto('login_sessions').values(row).execute();
}

export function findLoginSession(db: Db, id: string): Promise<LoginSessionRow | undefined> {
  return db.selectFrom('login_sessions').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Revokes a session; a session the table does not know yet (an external issuer's) is recorded as
 * revoked. A second revoke keeps the first time.
 */
export async function revokeLoginSession(
  db: Db,
  row: LoginSessionRow & { revoked_at: string },
): Promise<void> {
  await db
    .insertInto('login_sessions')
    .values(row)
    .onConflict((oc) =>
      oc
        .column('id')
        .doUpdateSet({ revoked_at: row.revoked_at })
        .where('login_sessions.revoked_at', 'is', null),
    )
    .execute();
}

/** Drops sessions lapsed before `before`: a lapsed session is refused by its expiry alone. */
export async function deleteLapsedLoginSessions(db: Db, before: string): Promise<void> {
  await db.deleteFrom('login_sessions').where('expires_at', '<', before).execute();
}
