import { newId, timestamp } from '@paddock/protocol';
import {
  deleteLapsedLoginSessions,
  findFirstTeam,
  findLoginSession,
  findUserById,
  findUserByName,
  findUserBySubject,
  insertLoginSession,
  insertOrgMember,
  insertSigningKey,
  insertTeamMember,
  insertUser,
  listSigningKeys,
  revokeLoginSession,
  type Store,
} from '@paddock/store';
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  decodeJwt,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JSONWebKeySet,
  type JWK,
  type JWTVerifyGetKey,
  jwtVerify,
  SignJWT,
} from 'jose';
import { hashPassword, verifyPassword } from '../crypto/password.ts';
import type { SecretBox } from '../crypto/secret-box.ts';
import { PaddockError } from '../errors.ts';
import { createLoginThrottle } from './login-throttle.ts';

/** A verified login session: whose it is and until when it holds (epoch ms). */
export interface VerifiedSession {
  userId: string;
  sessionId: string;
  expiresAt: number;
}

export interface LoginResponse {
  access_token: string;
  token_type: 'bearer';
  expires_at: string;
}

/**
 * Login sessions (D13): JWTs from Paddock's built-in identity provider (users with scrypt-hashed
 * passwords, EdDSA-signed short-lived tokens, its keys at `/.well-known/jwks.json`) or from an
 * external OpenID Connect issuer. A session carries no scope list and is never scope-checked.
 */
export interface LoginSessions {
  /** `client`: the address the attempt came from, which the lockout of failed attempts is keyed on too. */
  login(username: string, password: string, client: string): Promise<LoginResponse>;
  /**
   * The user a JWT speaks for, or undefined when no trusted issuer signed it, it has lapsed, or it
   * was logged out.
   */
  verify(jwt: string): Promise<VerifiedSession | undefined>;
  /**
   * Ends the session a JWT carries, on every node (its server-side state is revoked); again is a
   * no-op. Answers false when no trusted issuer signed it (or it has lapsed).
   */
  logout(jwt: string): Promise<boolean>;
  jwks(): Promise<JSONWebKeySet>;
}

export interface LoginSessionOptions {
  store: Store;
  secrets: SecretBox;
  /** The built-in provider's `iss`: the server's own URL. */
  issuer: string;
  ttlMs: number;
  /** An external OpenID Connect issuer whose access tokens are also sessions. */
  external?: { issuer: string; audience: string };
}

const audience = 'paddock';
const algorithm = 'EdDSA';

export function createLoginSessions(options: LoginSessionOptions): LoginSessions {
  const builtin = builtinKeys(options.store, options.secrets);
  const external = options.external && externalIssuer(options.store, options.external);
  // Spent on unknown usernames too, so a login's timing does not tell which usernames exist.
  const decoy = hashPassword('not a password');
  const throttle = createLoginThrottle({ limit: 10, windowMs: 15 * 60_000 });

  /** The session a trusted issuer signed (and that has not lapsed), whatever its server-side state. */
  async function signedSession(jwt: string): Promise<(VerifiedSession & { builtin: boolean }) | undefined> {
    let issuer: string | undefined;
    try {
      issuer = decodeJwt(jwt).iss;
    } catch {
      return undefined;
    }
    if (issuer === options.issuer) {
      const payload = await verifyWith(jwt, builtin.keySet, { issuer, audience, algorithms: [algorithm] });
      const found = payload && (await session(payload, () => findUserById(options.store.db, payload.sub)));
      return found && { ...found, builtin: true };
    }
    if (external && issuer === external.issuer) {
      const found = await external.verify(jwt);
      return found && { ...found, builtin: false };
    }
    return undefined;
  }

  return {
    async login(username, password, client) {
      throttle.check(username, client);
      const user = await findUserByName(options.store.db, username);
      const ok = await verifyPassword(password, user?.password_hash ?? (await decoy));
      if (!user?.password_hash || !ok) {
        throttle.failed(username, client);
        throw new PaddockError('invalid_credentials', 'invalid username or password');
      }
      throttle.succeeded(username, client);
      const { kid, privateKey } = await builtin.signingKey();
      const expiresAt = Date.now() + options.ttlMs;
      const jti = newId();
      // The session's server-side state, which logout revokes: a JWT alone could not be taken back.
      await insertLoginSession(options.store.db, {
        id: jti,
        user_id: user.id,
        created_at: timestamp(),
        expires_at: timestamp(new Date(expiresAt)),
        revoked_at: null,
      });
      await deleteLapsedLoginSessions(options.store.db, timestamp());
      const token = await new SignJWT({})
        .setProtectedHeader({ alg: algorithm, kid, typ: 'JWT' })
        .setIssuer(options.issuer)
        .setAudience(audience)
        .setSubject(user.id)
        .setJti(jti)
        .setIssuedAt()
        .setExpirationTime(Math.floor(expiresAt / 1000))
        .sign(privateKey);
      return { access_token: token, token_type: 'bearer', expires_at: timestamp(new Date(expiresAt)) };
    },

    async verify(jwt) {
      const signed = await signedSession(jwt);
      if (!signed) return undefined;
      const state = await findLoginSession(options.store.db, signed.sessionId);
      // A built-in session counts only while its row does (made at login); an external issuer's has
      // a row only once it is logged out.
      if (state?.revoked_at || (signed.builtin && state?.user_id !== signed.userId)) return undefined;
      return { userId: signed.userId, sessionId: signed.sessionId, expiresAt: signed.expiresAt };
    },

    async logout(jwt) {
      const signed = await signedSession(jwt);
      if (!signed) return false;
      const at = timestamp();
      await revokeLoginSession(options.store.db, {
        id: signed.sessionId,
        user_id: signed.userId,
        created_at: at,
        expires_at: timestamp(new Date(signed.expiresAt)),
        revoked_at: at,
      });
      return true;
    },

    jwks: () => builtin.jwks(),
  };
}

interface Claims {
  sub: string;
  jti?: string;
  exp: number;
}

async function verifyWith(
  jwt: string,
  keys: JWTVerifyGetKey,
  checks: { issuer: string; audience: string; algorithms?: string[] },
): Promise<Claims | undefined> {
  try {
    const { payload } = await jwtVerify(jwt, keys, { ...checks, requiredClaims: ['sub', 'exp'] });
    return payload as Claims;
  } catch {
    return undefined;
  }
}

async function session(
  claims: Claims,
  user: () => Promise<{ id: string } | undefined>,
): Promise<VerifiedSession | undefined> {
  const found = await user();
  if (!found) return undefined;
  return {
    userId: found.id,
    sessionId: claims.jti ?? `${claims.sub}:${claims.exp}`,
    expiresAt: claims.exp * 1000,
  };
}

/**
 * The built-in provider's Ed25519 keys, kept in the database so every server node signs and
 * verifies alike; the private half is sealed with the deployment's secret key. The first node to
 * start makes one; nodes sign with the oldest and verify with all of them.
 */
function builtinKeys(store: Store, secrets: SecretBox) {
  let loaded: Promise<{ sign: { kid: string; privateKey: CryptoKey }; jwks: JSONWebKeySet }> | undefined;
  let lastReload = 0;

  async function load() {
    let rows = await listSigningKeys(store.db);
    if (rows.length === 0) {
      const { publicKey, privateKey } = await generateKeyPair(algorithm, {
        crv: 'Ed25519',
        extractable: true,
      });
      const kid = newId();
      const publicJwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: algorithm, use: 'sig' };
      await insertSigningKey(store.db, {
        kid,
        public_jwk: JSON.stringify(publicJwk),
        private_jwk_sealed: secrets.seal(JSON.stringify(await exportJWK(privateKey))),
        created_at: timestamp(),
      });
      rows = await listSigningKeys(store.db);
    }
    const first = rows[0]!;
    const privateKey = (await importJWK(
      JSON.parse(secrets.open(first.private_jwk_sealed)) as JWK,
      algorithm,
    )) as CryptoKey;
    return {
      sign: { kid: first.kid, privateKey },
      jwks: { keys: rows.map((row) => JSON.parse(row.public_jwk) as JWK) },
    };
  }

  const current = () => {
    loaded ??= load().catch((error: unknown) => {
      loaded = undefined;
      throw error;
    });
    return loaded;
  };

  return {
    signingKey: async () => (await current()).sign,
    jwks: async () => (await current()).jwks,
    /** Verifies against the known keys; a key made by another node since is picked up (at most once a second). */
    keySet: (async (header, token) => {
      const { jwks } = await current();
      if (header.kid && !jwks.keys.some((k) => k.kid === header.kid) && Date.now() - lastReload > 1000) {
        lastReload = Date.now();
        loaded = undefined;
      }
      return createLocalJWKSet((await current()).jwks)(header, token);
    }) as JWTVerifyGetKey,
  };
}

/**
 * An external OpenID Connect issuer: its keys come from the `jwks_uri` of its discovery document
 * (fetched once, then cached and refreshed by jose). A subject seen for the first time becomes a
 * Paddock user, named after its `preferred_username` or `email`.
 */
function externalIssuer(store: Store, config: { issuer: string; audience: string }) {
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
