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

/** How many tokens the cache keeps (the oldest go first); a token it lacks is read from the database. */
const cachedTokens = 10_000;

/**
 * Resolves the three `pdk_` token classes by their hash, and anything else as a login session JWT,
 * with the user's team memberships, so that a revocation, a logout or a new team counts on the very
 * next request, on every node sharing the database. A token costs two indexed queries (by its hash,
 * then its user's teams). On SQLite a token's row and teams are kept and used again while the
 * store's version of both tables is the one read before them (`Store.credentialVersion`: no write
 * here, no commit by another node on the same file); its revocation and expiry are still checked
 * on every request. On PostgreSQL every request reads them: other nodes write there, and their
 * signals come late.
 */
export function createAuthenticator(
  store: Store,
  options: { sessions?: Pick<LoginSessions, 'verify'> } = {},
): Authenticator {
  const cache = new Map<string, { version: string; row: TokenRow; teamIds: string[] }>();
  const isPdkToken = (token: string) =>
    Object.values(tokenPrefixes).some((prefix) => token.startsWith(prefix));

  async function resolve(token: string): Promise<Actor | undefined> {
    if (!isPdkToken(token)) {
      const session = await options.sessions?.verify(token);
      if (!session) return undefined;
      return {
        userId: session.userId,
        teamIds: new Set(await listTeamIds(store.db, session.userId)),
        credential: {
          id: session.sessionId,
          kind: 'session',
          scopes: new Set(),
          binding: { type: 'user' },
          expiresAt: session.expiresAt,
        },
      };
    }
    const hash = hashToken(token);
    // Read before the rows are: a write meanwhile makes what they say stale.
    const version = store.credentialVersion?.();
    const cached = cache.get(hash);
    if (cached && cached.version === version)
      return isLive(cached.row) ? toActor(cached.row, cached.teamIds) : undefined;
    const row = await findTokenByHash(store.db, hash);
    if (!row || !isLive(row)) return undefined;
    const teamIds = await listTeamIds(store.db, row.user_id);
    if (version !== undefined) {
      cache.delete(hash);
      if (cache.size >= cachedTokens) cache.delete(cache.keys().next().value!);
      cache.set(hash, { version, row, teamIds });
    }
    return toActor(row, teamIds);
  }

  return {
    async authenticate(authorization) {
      if (!authorization) throw new PaddockError('missing_token', 'missing bearer token');
      const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
      if (!match) throw new PaddockError('invalid_token', 'invalid or expired PAT');
      const actor = await resolve(match[1]!);
      if (!actor) throw new PaddockError('invalid_token', 'invalid or expired PAT');
      return actor;
    },
  };
}

function isLive(row: TokenRow): boolean {
  if (row.revoked_at) return false;
  return !row.expires_at || row.expires_at > timestamp();
}

function toActor(row: TokenRow, teamIds: readonly string[]): Actor {
  const binding: Actor['credential']['binding'] = row.thread_id
    ? { type: 'thread', threadId: row.thread_id }
    : row.agent_id
      ? { type: 'agent', agentId: row.agent_id }
      : { type: 'user' };
  return {
    userId: row.user_id,
    teamIds: new Set(teamIds),
    credential: {
      id: row.id,
      kind: row.kind as Actor['credential']['kind'],
      scopes: new Set(row.scopes.split(',').filter(Boolean) as Scope[]),
      binding,
    },
  };
}
