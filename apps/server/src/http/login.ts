import { type LoginSessions, logout, type Revocations } from '@paddock/core';
import { loginBodySchema, loginResponseSchema } from '@paddock/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';

/**
 * The built-in identity provider (D13): password login, logout, and the keys its sessions are
 * signed with.
 */
export function loginRoutes(app: FastifyInstance, sessions: LoginSessions, revocations: Revocations): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.post(
    '/v2/auth/login',
    { config: { auth: false }, schema: { body: loginBodySchema, response: { 200: loginResponseSchema } } },
    // request.ip: the socket's address, or the client's as a trusted proxy (PADDOCK_TRUST_PROXY) says.
    (request) => sessions.login(request.body.username, request.body.password, request.ip),
  );
  // Not through the auth hook: a session already logged out may log out again (204 both times).
  r.post('/v2/auth/logout', { config: { auth: false } }, async (request, reply) => {
    await logout({ sessions, revocations, authorization: request.headers.authorization });
    return reply.status(204).send();
  });
  r.get(
    '/.well-known/jwks.json',
    { config: { auth: false }, schema: { hide: true } },
    async (_request, reply) =>
      reply.header('cache-control', 'public, max-age=300').send(await sessions.jwks()),
  );
}
