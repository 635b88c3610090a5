import type { Selectable } from 'kysely';
import type { TokensTable } from '../schema.ts';
import type { Db } from '../store.ts';

export type TokenRow = Selectable<TokensTable>;

export async function insertToken(db: Db, token: TokenRow): Promise<void> {
  await db.insertInto('tokens').values(token).execute();
}

export function findTokenByHash(db: Db, hash: string): Promise<TokenRow | undefined> {
  return db.selectFrom('tokens').selectAll().where('token_hash', '=', hash).executeTakeFirst();
}

/** Revokes every live token of one kind bound to a thread, e.g. before a sandbox gets a fresh one. */
/** Revokes the thread's sandbox tokens, all of them or all but `keepId`. */
export async function revokeThreadTokens(
  db: Db,
  threadId: string,
  at: string,
  keepId?: string,
): Promise<void> {
  let query = db
    .updateTable('tokens')
    .set({ revoked_at: at })
    .where('kind', '=', 'thread')
    .where('thread_id', '=', threadId)
    .where('revoked_at', 'is', null);
  if (keepId) query = query.where('id', '!=', keepId);
  await query.execute();
}

export async function revokeToken(db: Db, id: string, at: string): Promise<void> {
  await db.updateTable('tokens').set({ revoked_at: at }).where('id', '=', id).execute();
}
