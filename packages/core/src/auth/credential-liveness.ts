import { timestamp } from '@paddock/protocol';
import { type Db, findLoginSession, isTokenLive } from '@paddock/store';
import type { Actor } from '../context.ts';

/**
 * Whether the credential a request was authenticated with still counts (not revoked, not lapsed,
 * not logged out): what a long-lived request, such as an event stream, re-checks while it lasts.
 */
export async function isCredentialLive(db: Db, credential: Actor['credential']): Promise<boolean> {
  if (credential.expiresAt !== undefined && credential.expiresAt <= Date.now()) return false;
  if (credential.kind !== 'session') return isTokenLive(db, credential.id, timestamp());
  const state = await findLoginSession(db, credential.id);
  return !state?.revoked_at;
}
