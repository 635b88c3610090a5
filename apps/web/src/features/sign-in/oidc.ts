import type { SignInProviders } from '@paddock/sdk';
import * as oauth from 'oauth4webapi';
import { oidcCallbackPath } from './redirects.ts';

type Issuer = NonNullable<SignInProviders['oidc']>;

/**
 * Sign-in through the deployment's OpenID Connect issuer: the authorization code flow with PKCE, as
 * a public client (oauth4webapi). The issuer's access token, for Paddock's audience, is the session
 * the server accepts. What the flow needs across the redirect (verifier, state, nonce, where to go
 * after) waits in this tab's `sessionStorage` and is used once.
 */
const pendingKey = 'paddock.oidc';

interface Pending {
  issuer: string;
  client_id: string;
  verifier: string;
  state: string;
  nonce: string;
  next: string;
}

/** An issuer reached over plain HTTP is the operator's choice (a development one on loopback). */
const options = (issuer: URL) => (issuer.protocol === 'http:' ? { [oauth.allowInsecureRequests]: true } : {});

async function discover(issuer: string): Promise<oauth.AuthorizationServer> {
  const url = new URL(issuer);
  return oauth.processDiscoveryResponse(url, await oauth.discoveryRequest(url, options(url)));
}

/** Goes to the issuer's sign-in page; it sends the browser back to {@link oidcCallbackPath}. */
export async function beginOidcSignIn(issuer: Issuer, next: string): Promise<void> {
  const server = await discover(issuer.issuer);
  if (!server.authorization_endpoint) throw new Error('The issuer names no authorization endpoint.');
  const pending: Pending = {
    issuer: issuer.issuer,
    client_id: issuer.client_id,
    verifier: oauth.generateRandomCodeVerifier(),
    state: oauth.generateRandomState(),
    nonce: oauth.generateRandomNonce(),
    next,
  };
  sessionStorage.setItem(pendingKey, JSON.stringify(pending));
  const url = new URL(server.authorization_endpoint);
  url.search = new URLSearchParams({
    client_id: issuer.client_id,
    redirect_uri: redirectUri(),
    response_type: 'code',
    scope: issuer.scope,
    code_challenge: await oauth.calculatePKCECodeChallenge(pending.verifier),
    code_challenge_method: 'S256',
    state: pending.state,
    nonce: pending.nonce,
  }).toString();
  window.location.assign(url);
}

/**
 * Back from the issuer: checks the answer against what this tab sent (state, then the code
 * exchanged with the PKCE verifier, the ID token's nonce), and answers the access token and where to
 * go next. Throws with the issuer's own error (`access_denied`, …) or what did not match.
 */
export async function finishOidcSignIn(callback: URL): Promise<{ token: string; next: string }> {
  const saved = sessionStorage.getItem(pendingKey);
  sessionStorage.removeItem(pendingKey);
  if (!saved) throw new Error('This sign-in was not started in this tab: start it again.');
  const pending = JSON.parse(saved) as Pending;
  const server = await discover(pending.issuer);
  const client: oauth.Client = { client_id: pending.client_id };
  let parameters: URLSearchParams;
  try {
    parameters = oauth.validateAuthResponse(server, client, callback, pending.state);
  } catch (error) {
    if (error instanceof oauth.AuthorizationResponseError)
      throw new Error(`The issuer refused the sign-in: ${error.error_description ?? error.error}`);
    throw error;
  }
  const response = await oauth.authorizationCodeGrantRequest(
    server,
    client,
    oauth.None(),
    parameters,
    redirectUri(),
    pending.verifier,
    options(new URL(pending.issuer)),
  );
  const tokens = await oauth.processAuthorizationCodeResponse(server, client, response, {
    expectedNonce: pending.nonce,
  });
  return { token: tokens.access_token, next: pending.next };
}

function redirectUri(): string {
  return `${window.location.origin}${oidcCallbackPath}`;
}
