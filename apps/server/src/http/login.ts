import { type LoginSessions, logout, type Revocations } from '@paddock/core';
import {
  loginBodySchema,
  loginResponseSchema,
  type SignInProviders,
  signInProvidersSchema,
} from '@paddock/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { rawBody } from './openapi.ts';

/**
 * The built-in identity provider (D13): password login, logout, and the keys its sessions are
 * signed with; and how a browser signs in (the built-in login, or an external issuer's).
 */
export function loginRoutes(
  app: FastifyInstance,
  {
    sessions,
    services: { revocations },
    signIn,
  }: { sessions: LoginSessions; services: { revocations: Revocations }; signIn: SignInProviders },
): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/v2/auth/providers',
    {
      config: { auth: false },
      schema: {
        operationId: 'getSignInProviders',
        summary: 'How to sign in: the built-in login, and the OpenID Connect issuer when one is configured',
        response: { 200: signInProvidersSchema },
      },
    },
    () => signIn,
  );
  r.post(
    '/v2/auth/login',
    {
      config: { auth: false },
      schema: {
        operationId: 'login',
        summary: 'Log in with a username and password; answers a session token (a JWT)',
        body: loginBodySchema,
        errors: ['invalid_credentials', 'too_many_attempts'],
        response: { 200: loginResponseSchema },
      },
    },
    // request.ip: the socket's address, or the client's as a trusted proxy (PADDOCK_TRUST_PROXY) says.
    (request) => sessions.login(request.body.username, request.body.password, request.ip),
  );
  // Not through the auth hook: a session already logged out may log out again (204 both times).
  r.post(
    '/v2/auth/logout',
    {
      config: { auth: false },
      schema: {
        operationId: 'logout',
        summary: 'Log out the login session the bearer token is',
        // The session's own token, the one credential this route reads.
        security: [{ bearer: [] }],
        errors: ['missing_token', 'invalid_token', 'jwt_required'],
        response: { 204: { type: 'null', description: 'Logged out (also when it already was)' } },
      },
    },
    async (request, reply) => {
      await logout({ sessions, revocations, authorization: request.headers.authorization });
      return reply.status(204).send();
    },
  );
  r.get(
    '/.well-known/jwks.json',
    {
      config: { auth: false },
      schema: {
        operationId: 'getJwks',
        summary: 'The public keys login sessions are signed with (a JSON Web Key Set)',
        response: { 200: rawBody('A JSON Web Key Set', 'application/json') },
      },
    },
    async (_request, reply) =>
      reply.header('cache-control', 'public, max-age=300').send(await sessions.jwks()),
  );
}
