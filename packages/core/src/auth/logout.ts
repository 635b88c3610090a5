import { tokenPrefixes } from '@paddock/protocol';
import { PaddockError } from '../errors.ts';
import type { LoginSessions } from './login-sessions.ts';
import type { Revocations } from './revocations.ts';

/**
 * `POST /v2/auth/logout`: ends the login session its bearer carries, on every node. Idempotent: a
 * session already logged out is still one its issuer signed, so a second logout answers alike. A
 * `pdk_` token is not a session (it is revoked through its own route).
 */
export async function logout(input: {
  sessions: Pick<LoginSessions, 'logout'>;
  revocations: Revocations;
  authorization: string | undefined;
}): Promise<void> {
  if (!input.authorization) throw new PaddockError('missing_token', 'missing bearer token');
  const match = /^Bearer\s+(\S+)\s*$/i.exec(input.authorization);
  if (!match) throw new PaddockError('invalid_token', 'invalid or expired PAT');
  const bearer = match[1]!;
  if (Object.values(tokenPrefixes).some((prefix) => bearer.startsWith(prefix)))
    throw new PaddockError(
      'jwt_required',
      'logout ends a login session; revoke a token through its own route',
    );
  if (!(await input.sessions.logout(bearer)))
    throw new PaddockError('invalid_token', 'invalid or expired PAT');
  input.revocations.revoked();
}
