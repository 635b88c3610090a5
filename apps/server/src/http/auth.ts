import { type Actor, type Authenticator, PaddockError, requireScope } from '@paddock/core';
import type { Scope } from '@paddock/protocol';
import type { FastifyInstance } from 'fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * `false` for public routes; otherwise the scope the credential needs (none for reads), or the
     * scopes, checked in order, so the refusal names the first one missing.
     */
    auth?: false | { scope?: Scope | readonly Scope[] };
  }
  interface FastifyRequest {
    actor: Actor;
  }
}

/**
 * Authenticates every routed request and checks the route's declared scope before any handler
 * runs, so a refused write changes nothing.
 */
export function installAuth(app: FastifyInstance, authenticator: Authenticator): void {
  app.decorateRequest('actor', undefined as unknown as Actor);
  app.addHook('onRequest', async (request, reply) => {
    // Set here, in the one hook every request passes, so errors and 404s carry it too.
    void reply.header('x-request-id', request.id);
    const auth = request.routeOptions.config.auth;
    if (auth === false || request.is404) return;
    request.actor = await authenticator
      .authenticate(request.headers.authorization)
      .catch((error: unknown) => {
        if (error instanceof PaddockError) throw error;
        // The credential could not be looked up (the database is unreachable): a retry may succeed.
        request.log.error({ err: error }, 'authorization unavailable');
        throw new PaddockError('unavailable', 'authorization temporarily unavailable', { retryAfter: 2 });
      });
    for (const scope of [auth?.scope ?? []].flat()) requireScope(request.actor, scope);
  });
}
