import { type Scope, timestamp } from '@paddock/protocol';
import { findTokenByHash, listTeamIds, type Store, type TokenRow } from '@paddock/store';
import type { Actor } from '../context.ts';
import { hashToken } from '../crypto/tokens.ts';
import { PaddockError } from '../errors.ts';

export interface Authenticator {
  /** Resolves a bearer token to an actor, or throws 401 with the D3 wording. */
  authenticate(authorization: string | undefined): Promise<Actor>;
}

/**
 * Token resolutions, with the user's team memberships, are cached for a few seconds: a hot read
 * path should not cost queries per request. A revocation or a membership change takes effect
 * within the TTL.
 */
export function createAuthenticator(store: Store, options: { cacheTtlMs?: number } = {}): Authenticator {
  const ttl = options.cacheTtlMs ?? 5000;
  const cache = new Map<string, { actor: Actor | null; until: number }>();

  async function resolve(hash: string): Promise<Actor | null> {
    const row = await findTokenByHash(store.db, hash);
    if (!row || !isLive(row)) return null;
    return toActor(row, new Set(await listTeamIds(store.db, row.user_id)));
  }

  return {
    async authenticate(authorization) {
      if (!authorization) throw new PaddockError('missing_token', 'missing bearer token');
      const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
      if (!match) throw new PaddockError('invalid_token', 'invalid or expired PAT');
      const hash = hashToken(match[1]!);
      const now = Date.now();
      let entry = cache.get(hash);
      if (!entry || entry.until < now) {
        entry = { actor: await resolve(hash), until: now + ttl };
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
