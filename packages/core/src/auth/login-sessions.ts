import { newId, timestamp } from '@paddock/protocol';
import {
  deleteLapsedLoginSessions,
  findLoginSession,
  findUserById,
  findUserByName,
  insertLoginSession,
  revokeLoginSession,
  type Store,
} from '@paddock/store';
import { decodeJwt, type JSONWebKeySet, SignJWT } from 'jose';
import { hashPassword, verifyPassword } from '../crypto/password.ts';
import type { SecretBox } from '../crypto/secret-box.ts';
import { PaddockError } from '../errors.ts';
import { externalIssuer } from './external-issuer.ts';
import { createLoginThrottle } from './login-throttle.ts';
import { session, type VerifiedSession, verifyWith } from './session-claims.ts';
import { algorithm, builtinKeys } from './signing-keys.ts';

export type { VerifiedSession } from './session-claims.ts';

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

export function createLoginSessions(options: LoginSessionOptions): LoginSessions {
  const builtin = builtinKeys(options.store, options.secrets);
  const external = options.external && externalIssuer(options.store, options.external);
  // Spent on unknown usernames too, so a login's timing does not tell which usernames exist.
  const decoy = hashPassword('not a password');
  const throttle = createLoginThrottle(options.store, { limit: 10, windowMs: 15 * 60_000 });

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
      await throttle.check(username, client);
      const user = await findUserByName(options.store.db, username);
      const ok = await verifyPassword(password, user?.password_hash ?? (await decoy));
      if (!user?.password_hash || !ok) {
        await throttle.failed(username, client);
        throw new PaddockError('invalid_credentials', 'invalid username or password');
      }
      await throttle.succeeded(username, client);
      const { kid, privateKey } = await builtin.signingKey();
      // One reading of the clock, in whole seconds as a JWT has them: exp - iat is the session's ttl.
      const issuedAt = Math.floor(Date.now() / 1000);
      const expiresAt = issuedAt * 1000 + options.ttlMs;
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
        .setIssuedAt(issuedAt)
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
