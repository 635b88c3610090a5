import { type Scope, timestamp } from '@paddock/protocol';
import { findLiveToken, listLiveTokens, renameToken, revokeLiveToken, type TokenRow } from '@paddock/store';
import type { Ctx, Services } from '../context.ts';
import { PaddockError } from '../errors.ts';
import { mintToken } from './mint-token.ts';

/**
 * Personal access tokens (spec Authentication 4, D13), managed from a login session only (the
 * routes declare it). Scopes are fixed at mint: a different set means a new token.
 */
export interface PersonalToken {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  created_at: string;
}

export async function mintPersonalToken(
  ctx: Ctx,
  input: { name?: string; scopes: Scope[] },
): Promise<PersonalToken & { token: string }> {
  const name = input.name ?? 'personal access token';
  const created_at = timestamp(new Date(ctx.clock.now()));
  const minted = await mintToken(ctx.store.db, {
    kind: 'pat',
    userId: ctx.actor.userId,
    name,
    scopes: input.scopes,
    createdAt: created_at,
  });
  return {
    id: minted.id,
    name,
    prefix: minted.prefix,
    scopes: input.scopes,
    created_at,
    token: minted.token,
  };
}

export async function listPersonalTokens(ctx: Ctx): Promise<{ items: PersonalToken[] }> {
  const rows = await listLiveTokens(ctx.store.db, { kind: 'pat', userId: ctx.actor.userId });
  return { items: rows.map(personalToken) };
}

export async function renamePersonalToken(
  ctx: Ctx,
  input: { tokenId: string; name: string },
): Promise<PersonalToken> {
  const row = await ownToken(ctx, input.tokenId);
  await renameToken(ctx.store.db, row.id, input.name);
  return personalToken({ ...row, name: input.name });
}

export async function revokePersonalToken(
  ctx: Ctx,
  services: Pick<Services, 'revocations'>,
  input: { tokenId: string },
): Promise<void> {
  const row = await ownToken(ctx, input.tokenId);
  if (!(await revokeLiveToken(ctx.store.db, row.id, timestamp(new Date(ctx.clock.now())))))
    throw tokenNotFound();
  services.revocations.revoked();
}

/** The caller's own live personal token, else 404 (another user's looks absent). */
async function ownToken(ctx: Ctx, tokenId: string): Promise<TokenRow> {
  const row = await findLiveToken(ctx.store.db, tokenId);
  if (row?.kind !== 'pat' || row.user_id !== ctx.actor.userId) throw tokenNotFound();
  return row;
}

const tokenNotFound = () => new PaddockError('token_not_found', 'Token not found');

function personalToken(row: TokenRow): PersonalToken {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: row.scopes.split(',').filter(Boolean),
    created_at: row.created_at,
  };
}
