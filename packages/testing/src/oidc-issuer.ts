import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose';

/**
 * An OpenID Connect issuer on loopback, for tests: a seam where a deployment has its IdP. It serves
 * what any issuer does (discovery, keys, the authorization endpoint, the token endpoint with PKCE,
 * CORS for browser clients) and signs RS256 JWTs. Its sign-in page is skipped: `/authorize` sends
 * the browser straight back as `user` (or refuses, after {@link OidcIssuer.refuseNext}).
 */
export interface OidcIssuer {
  url: string;
  /** An access token of this issuer (for `audience`, by default the one it was started with). */
  sign(claims: JWTPayload, audience?: string): Promise<string>;
  /** The next authorization request is answered `access_denied`. */
  refuseNext(): void;
  close(): Promise<void>;
}

interface Grant {
  client_id: string;
  redirect_uri: string;
  challenge: string;
  nonce?: string;
}

export async function startOidcIssuer(options: {
  audience: string;
  /** Who signs in at `/authorize`. */
  user?: { sub: string; preferred_username?: string };
}): Promise<OidcIssuer> {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'test-issuer', alg: 'RS256', use: 'sig' };
  const user = options.user ?? { sub: 'oidc-user', preferred_username: 'oidc-user' };
  const grants = new Map<string, Grant>();
  let refuse = false;
  let url = '';

  const sign = (claims: JWTPayload, audience = options.audience) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: jwk.kid })
      .setIssuer(url)
      .setAudience(audience)
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(privateKey);

  const json = (response: ServerResponse, status: number, body: unknown) => {
    response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    response.end(JSON.stringify(body));
  };

  async function token(request: IncomingMessage, response: ServerResponse) {
    let raw = '';
    for await (const chunk of request) raw += chunk;
    const form = new URLSearchParams(raw);
    const grant = grants.get(form.get('code') ?? '');
    grants.delete(form.get('code') ?? '');
    const verifier = form.get('code_verifier') ?? '';
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    if (
      form.get('grant_type') !== 'authorization_code' ||
      !grant ||
      grant.client_id !== form.get('client_id') ||
      grant.redirect_uri !== form.get('redirect_uri') ||
      grant.challenge !== challenge
    ) {
      return json(response, 400, { error: 'invalid_grant' });
    }
    json(response, 200, {
      token_type: 'Bearer',
      expires_in: 600,
      access_token: await sign({ sub: user.sub, preferred_username: user.preferred_username }),
      id_token: await sign({ sub: user.sub, nonce: grant.nonce }, grant.client_id),
    });
  }

  function authorize(query: URLSearchParams, response: ServerResponse) {
    const back = new URL(query.get('redirect_uri') ?? '');
    const state = query.get('state');
    if (state) back.searchParams.set('state', state);
    back.searchParams.set('iss', url);
    if (refuse || query.get('code_challenge_method') !== 'S256') {
      refuse = false;
      back.searchParams.set('error', 'access_denied');
      back.searchParams.set('error_description', 'the user declined');
    } else {
      const code = randomBytes(16).toString('base64url');
      grants.set(code, {
        client_id: query.get('client_id') ?? '',
        redirect_uri: query.get('redirect_uri') ?? '',
        challenge: query.get('code_challenge') ?? '',
        nonce: query.get('nonce') ?? undefined,
      });
      back.searchParams.set('code', code);
    }
    response.writeHead(302, { location: back.toString() });
    response.end();
  }

  const server = createServer((request, response) => {
    response.setHeader('access-control-allow-origin', '*');
    response.setHeader('access-control-allow-headers', '*');
    if (request.method === 'OPTIONS') return response.writeHead(204).end();
    const target = new URL(request.url ?? '/', url);
    switch (target.pathname) {
      case '/.well-known/openid-configuration':
        return json(response, 200, {
          issuer: url,
          authorization_endpoint: `${url}/authorize`,
          token_endpoint: `${url}/token`,
          jwks_uri: `${url}/keys`,
          response_types_supported: ['code'],
          code_challenge_methods_supported: ['S256'],
          id_token_signing_alg_values_supported: ['RS256'],
          token_endpoint_auth_methods_supported: ['none'],
          authorization_response_iss_parameter_supported: true,
        });
      case '/keys':
        return json(response, 200, { keys: [jwk] });
      case '/authorize':
        return authorize(target.searchParams, response);
      case '/token':
        if (request.method === 'POST') return void token(request, response);
        break;
    }
    json(response, 404, { error: 'not_found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    sign,
    refuseNext: () => {
      refuse = true;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
