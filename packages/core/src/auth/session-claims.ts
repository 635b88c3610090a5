import { type JWTVerifyGetKey, jwtVerify } from 'jose';

/** A verified login session: whose it is and until when it holds (epoch ms). */
export interface VerifiedSession {
  userId: string;
  sessionId: string;
  expiresAt: number;
}

export interface Claims {
  sub: string;
  jti?: string;
  exp: number;
}

/** The claims of a JWT that one of `keys` signed and that passes `checks`; undefined otherwise. */
export async function verifyWith(
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

/** The session of verified claims, when `user` finds whom they speak for. */
export async function session(
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
