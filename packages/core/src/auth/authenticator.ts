import { type Scope, timestamp, tokenPrefixes } from '@paddock/protocol';
import { findTokenByHash, listTeamIds, type Store, type TokenRow } from '@paddock/store';
import type { Actor } from '../context.ts';
import { hashToken } from '../crypto/tokens.ts';
import { PaddockError } from '../errors.ts';
import type { LoginSessions } from './login-sessions.ts';

export interface Authenticator {
  /** Resolves a bearer token to an actor, or throws 401 with the D3 wording. */
  authenticate(authorization: string | undefined): Promise<Actor>;
}

/**
 * Resolves the three `pdk_` token classes by their hash, and anything else as a login session JWT.
 * Resolutions, with the user's team memberships, are cached for a few seconds: a hot read path
 * should not cost queries per request. A revocation or a membership change takes effect within the
 * TTL; a session is never cached past its expiry.
 */
export function createAuthenticator(
  store: Store,
  options: { cacheTtlMs?: number; sessions?: Pick<LoginSessions, 'verify'> } = {},
): Authenticator {
  const ttl = options.cacheTtlMs ?? 5000;
  const cache = new Map<string, { actor: Actor | null; until: number }>();
  const isPdkToken = (token: string) =>
    Object.values(tokenPrefixes).some((prefix) => token.startsWith(prefix));

  async function resolve(
    token: string,
    hash: string,
    now: number,
  ): Promise<{ actor: Actor | null; until: number }> {
    if (!isPdkToken(token)) {
      const session = await options.sessions?.verify(token);
      if (!session) return { actor: null, until: now + ttl };
      const teamIds = new Set(await listTeamIds(store.db, session.userId));
      const actor: Actor = {
        userId: session.userId,
        teamIds,
        credential: { id: session.sessionId, kind: 'session', scopes: new Set(), binding: { type: 'user' } },
      };
      return { actor, until: Math.min(now + ttl, session.expiresAt) };
    }
    const row = await findTokenByHash(store.db, hash);
    if (!row || !isLive(row)) return { actor: null, until: now + ttl };
    return { actor: toActor(row, new Set(await listTeamIds(store.db, row.user_id))), until: now + ttl };
  }

  return {
    async authenticate(authorization) {
      if (!authorization) throw new PaddockError('missing_token', 'missing bearer token');
      const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
      if (!match) throw new PaddockError('invalid_token', 'invalid or expired PAT');
      const token = match[1]!;
      const hash = hashToken(token);
      const now = Date.now();
      let entry = cache.get(hash);
      if (!entry || entry.until <= now) {
        entry = await resolve(token, hash, now);
        if (cache.size > 10_000) cache.clear();
        cache.set(hash, entry);
      }
      if (!entry.actor) throw new PaddockError('invalid_token', 'invalid or expired PAT');
      return entry.actor;
    },
  };
}

function isLive(row: TokenRow): boolean {
  if (row.revoked_at) return false;
  return !row.expires_at || row.expires_at > timestamp();
}

function toActor(row: TokenRow, teamIds: ReadonlySet<string>): Actor {
  const binding: Actor['credential']['binding'] = row.thread_id
    ? { type: 'thread', threadId: row.thread_id }
    : row.agent_id
      ? { type: 'agent', agentId: row.agent_id }
      : { type: 'user' };
  return {
    userId: row.user_id,
    teamIds,
    credential: {
      id: row.id,
      kind: row.kind as Actor['credential']['kind'],
      scopes: new Set(row.scopes.split(',').filter(Boolean) as Scope[]),
      binding,
    },
  };
}
