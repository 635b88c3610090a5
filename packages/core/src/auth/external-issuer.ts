import { newId, timestamp } from '@paddock/protocol';
import {
  findFirstTeam,
  findUserByName,
  findUserBySubject,
  insertOrgMember,
  insertTeamMember,
  insertUser,
  type Store,
} from '@paddock/store';
import { createRemoteJWKSet, decodeJwt, type JWTVerifyGetKey } from 'jose';
import { session, type VerifiedSession, verifyWith } from './session-claims.ts';

/**
 * An external OpenID Connect issuer: its keys come from the `jwks_uri` of its discovery document
 * (fetched once, then cached and refreshed by jose). A subject seen for the first time becomes a
 * Paddock user, named after its `preferred_username` or `email`.
 */
export function externalIssuer(store: Store, config: { issuer: string; audience: string }) {
  let keys: Promise<JWTVerifyGetKey> | undefined;
  const discover = async (): Promise<JWTVerifyGetKey> => {
    const url = `${config.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
    const response = await fetch(url, { signal: AbortSignal.timeout(5000) });
    if (!response.ok) throw new Error(`OpenID discovery at ${url} answered ${response.status}`);
    const document = (await response.json()) as { jwks_uri?: string };
    if (!document.jwks_uri) throw new Error(`OpenID discovery at ${url} has no jwks_uri`);
    return createRemoteJWKSet(new URL(document.jwks_uri));
  };

  return {
    issuer: config.issuer,
    async verify(jwt: string): Promise<VerifiedSession | undefined> {
      keys ??= discover().catch((error: unknown) => {
        keys = undefined;
        throw error;
      });
      const claims = await verifyWith(jwt, await keys, { issuer: config.issuer, audience: config.audience });
      if (!claims) return undefined;
      const payload = decodeJwt(jwt) as { preferred_username?: unknown; email?: unknown };
      return session(claims, () => provisionExternalUser(store, config.issuer, claims.sub, payload));
    },
  };
}

/**
 * A subject seen for the first time becomes a Paddock user and a member of the deployment's first
 * organization and team (the bootstrap `default` ones): trusting the issuer for Paddock's audience is
 * the operator's decision to let its users in. Two first requests at once make one user.
 */
async function provisionExternalUser(
  store: Store,
  issuer: string,
  subject: string,
  claims: { preferred_username?: unknown; email?: unknown },
): Promise<{ id: string }> {
  const known = await findUserBySubject(store.db, issuer, subject);
  if (known) return known;
  const name = [claims.preferred_username, claims.email].find((v) => typeof v === 'string' && v) as
    | string
    | undefined;
  try {
    return await store.transaction(async (trx) => {
      const id = newId();
      const at = timestamp();
      // Usernames are unique; an external name that is taken gets the user id appended.
      const username = name && !(await findUserByName(trx, name)) ? name : `${name ?? 'oidc'}-${id}`;
      await insertUser(trx, { id, username, password_hash: null, issuer, subject, created_at: at });
      const home = await findFirstTeam(trx);
      if (home) {
        await insertOrgMember(trx, { org_id: home.org_id, user_id: id, role: 'member', created_at: at });
        await insertTeamMember(trx, { team_id: home.id, user_id: id, role: 'member', created_at: at });
      }
      return { id };
    });
  } catch (error) {
    const raced = await findUserBySubject(store.db, issuer, subject);
    if (raced) return raced;
    throw error;
  }
}
