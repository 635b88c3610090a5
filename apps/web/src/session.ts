import { createClient, type PaddockClient } from '@paddock/sdk';

/**
 * The signed-in session: the built-in login's session token, kept for this browser tab only
 * (`sessionStorage`: closing the tab signs out; never `localStorage`, which every tab and every
 * script of the origin reads for good).
 */
const key = 'paddock.session';

export function sessionToken(): string | null {
  return sessionStorage.getItem(key);
}

export function signIn(token: string): void {
  sessionStorage.setItem(key, token);
}

export function signOut(): void {
  sessionStorage.removeItem(key);
}

/** The SDK client of this origin, with the session's token (an empty one before sign-in). */
export function client(token = sessionToken() ?? ''): PaddockClient {
  return createClient({ baseUrl: window.location.origin, token });
}
