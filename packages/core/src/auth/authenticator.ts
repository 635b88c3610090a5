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
 * Resolves the three `pdk_` token classes by their hash, and anything else as a login session JWT,
 * on every request and from the database, with the user's team memberships: nothing is cached, so
 * a revocation, a logout or a new team counts on the very next request, on every node sharing the
 * database. A token costs two indexed queries (by its hash, then its user's teams: on SQLite
 * about 20 µs together, half of what one join of the two costs there).
 */
export function createAuthenticator(
  store: Store,
  options: { sessions?: Pick<LoginSessions, 'verify'> } = {},
): Authenticator {
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
    const row = await findTokenByHash(store.db, hashToken(token));
    if (!row || !isLive(row)) return undefined;
    return toActor(row, new Set(await listTeamIds(store.db, row.user_id)));
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
