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

/** Whether a token still counts: not revoked and not lapsed (`now` a D3 timestamp). */
export async function isTokenLive(db: Db, id: string, now: string): Promise<boolean> {
  const row = await db
    .selectFrom('tokens')
    .select(['revoked_at', 'expires_at'])
    .where('id', '=', id)
    .executeTakeFirst();
  return !!row && row.revoked_at === null && (row.expires_at === null || row.expires_at > now);
}

/** Records which host holds the sandbox a thread token was minted for. */
export async function setTokenHolder(db: Db, id: string, holder: string): Promise<void> {
  await db.updateTable('tokens').set({ holder }).where('id', '=', id).execute();
}

/** Revokes the live thread tokens of the sandboxes one host held; answers how many. */
export async function revokeHeldThreadTokens(db: Db, holder: string, at: string): Promise<number> {
  const result = await db
    .updateTable('tokens')
    .set({ revoked_at: at })
    .where('holder', '=', holder)
    .where('kind', '=', 'thread')
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

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
  await db
    .updateTable('tokens')
    .set({ revoked_at: at })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .execute();
}

/** A live token by id; revoked ones are gone as far as callers can tell. */
export function findLiveToken(db: Db, id: string): Promise<TokenRow | undefined> {
  return db
    .selectFrom('tokens')
    .selectAll()
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
}

/** Live tokens of one kind, newest first: a user's personal tokens, or an agent's keys. */
export function listLiveTokens(
  db: Db,
  where: { kind: 'pat'; userId: string } | { kind: 'agent'; agentId: string },
): Promise<TokenRow[]> {
  let query = db
    .selectFrom('tokens')
    .selectAll()
    .where('kind', '=', where.kind)
    .where('revoked_at', 'is', null);
  query =
    'userId' in where
      ? query.where('user_id', '=', where.userId)
      : query.where('agent_id', '=', where.agentId);
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
}

export async function renameToken(db: Db, id: string, name: string): Promise<void> {
  await db.updateTable('tokens').set({ name }).where('id', '=', id).execute();
}

/** Revokes a live token; answers whether it was live (a second revoke finds nothing). */
export async function revokeLiveToken(db: Db, id: string, at: string): Promise<boolean> {
  const result = await db
    .updateTable('tokens')
    .set({ revoked_at: at })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
