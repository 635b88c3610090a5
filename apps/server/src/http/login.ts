import type { LoginSessions } from '@paddock/core';
import { loginBodySchema, loginResponseSchema } from '@paddock/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';

/** The built-in identity provider (D13): password login, and the keys its sessions are signed with. */
export function loginRoutes(app: FastifyInstance, sessions: LoginSessions): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.post(
    '/v2/auth/login',
    { config: { auth: false }, schema: { body: loginBodySchema, response: { 200: loginResponseSchema } } },
    // request.ip: the socket's address, or the client's as a trusted proxy (PADDOCK_TRUST_PROXY) says.
    (request) => sessions.login(request.body.username, request.body.password, request.ip),
  );
  r.get(
    '/.well-known/jwks.json',
    { config: { auth: false }, schema: { hide: true } },
    async (_request, reply) =>
      reply.header('cache-control', 'public, max-age=300').send(await sessions.jwks()),
  );
}
