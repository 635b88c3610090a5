/** Where the OpenID Connect issuer sends the browser back after its sign-in. */
export const oidcCallbackPath = '/sign-in/callback';

/** Where to go after signing in: only a path of this app, never another origin (`//host`). */
export function nextPath(next: string | null): string {
  return next?.startsWith('/') && !next.startsWith('//') ? next : '/';
}
