import { type Actor, type Authenticator, PaddockError, requireScope } from '@paddock/core';
import type { Scope } from '@paddock/protocol';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/**
 * What a route asks of the credential, checked before any handler runs so a refused write changes
 * nothing. Permission scope and resource binding are independent checks (spec Authentication 6).
 */
export interface RouteAuth {
  /** The scope the credential needs (none for reads), or several, checked in order. */
  scope?: Scope | readonly Scope[];
  /**
   * A scope the route needs only while the deployment enforces its guarded writes (spec
   * Authentication 11); otherwise a would-be denial is logged and the request goes on.
   * `unlessBody` names body fields that make the scope unconditional (e.g. an agent's secrets).
   */
  guarded?: { scope: Scope; unlessBody?: readonly string[] };
  /** Only a login session may call it (personal token management): else 403 `jwt_required`. */
  session?: true;
  /**
   * Resource-bound credentials (agent keys, thread tokens) this route refuses (spec Authentication
   * 12), `what` the refusal says it cannot do, and the answer: `credential_scope_denied` (an object
   * detail: team agent listing), `binding_denied` (a string detail naming the binding: the
   * orchestration endpoints) or `forbidden` (writes a bound credential must not make). `only:
   * 'thread'` refuses a thread's token alone (a sandbox must not rewrite the agent it runs as).
   */
  refuseBound?: {
    as: 'credential_scope_denied' | 'binding_denied' | 'forbidden';
    what: string;
    only?: 'thread';
  };
  /**
   * Headers that may carry the token instead of `Authorization: Bearer` (the model gateway's
   * dialects: Anthropic's `x-api-key`, Gemini's `x-goog-api-key`).
   */
  keyHeaders?: readonly string[];
}

/** A sandbox's own token must not rewrite the agent every later thread runs as. */
export const sandboxCannotRewriteAgent = {
  as: 'forbidden',
  what: 'change the agent it runs as',
  only: 'thread',
} as const satisfies RouteAuth['refuseBound'];

declare module 'fastify' {
  interface FastifyContextConfig {
    /** `false` for public routes (no credential at all); otherwise what the credential must carry. */
    auth?: false | RouteAuth;
  }
  interface FastifyRequest {
    actor: Actor;
  }
}

export interface AuthOptions {
  /** Enforce the guarded writes (`PADDOCK_ENFORCE_WRITE_SCOPES`); off, they only log. */
  enforceGuardedWrites: boolean;
}

/**
 * Authenticates every routed request and checks the route's declared requirements before any
 * handler runs, so a refused write changes nothing.
 */
export function installAuth(app: FastifyInstance, authenticator: Authenticator, options: AuthOptions): void {
  app.decorateRequest('actor', undefined as unknown as Actor);
  app.addHook('onRequest', async (request, reply) => {
    // Set here, in the one hook every request passes, so errors and 404s carry it too.
    void reply.header('x-request-id', request.id);
    const auth = request.routeOptions.config.auth;
    if (auth === false || request.is404) return;
    request.actor = await authenticator
      .authenticate(request.headers.authorization ?? keyHeaderCredential(request, auth))
      .catch((error: unknown) => {
        if (error instanceof PaddockError) throw error;
        // The credential could not be looked up (the database is unreachable): a retry may succeed.
        request.log.error({ err: error }, 'authorization unavailable');
        throw new PaddockError('unavailable', 'authorization temporarily unavailable', { retryAfter: 2 });
      });
    if (!auth) return;
    if (auth.session && request.actor.credential.kind !== 'session')
      throw new PaddockError('jwt_required', 'this endpoint needs a login session, not a token');
    if (auth.refuseBound) refuseBound(request.actor, auth.refuseBound);
    for (const scope of [auth.scope ?? []].flat()) requireScope(request.actor, scope);
  });
  // Guarded writes may depend on the body, so they are checked once it is parsed, still before the
  // handler; only on the routes that declare one, so other requests pay nothing for it.
  app.addHook('onRoute', (route) => {
    const auth = route.config?.auth;
    const guarded = auth ? auth.guarded : undefined;
    if (!guarded) return;
    const check = async (request: FastifyRequest) =>
      checkGuarded(request, guarded, options.enforceGuardedWrites);
    route.preHandler = [check, ...[route.preHandler ?? []].flat()];
  });
}

/** A token in one of the route's `keyHeaders`, as the bearer credential it stands for. */
function keyHeaderCredential(request: FastifyRequest, auth: RouteAuth | undefined): string | undefined {
  for (const name of auth?.keyHeaders ?? []) {
    const value = request.headers[name];
    if (typeof value === 'string' && value) return `Bearer ${value}`;
  }
  return undefined;
}

function refuseBound(actor: Actor, rule: NonNullable<RouteAuth['refuseBound']>): void {
  const binding = actor.credential.binding;
  if (binding.type === 'user' || (rule.only && binding.type !== rule.only)) return;
  const bound = binding.type === 'agent' ? binding.agentId : binding.threadId;
  throw new PaddockError(
    rule.as,
    `${binding.type}-scoped credential (bound to ${binding.type} ${bound}) cannot ${rule.what}`,
  );
}

function checkGuarded(
  request: FastifyRequest,
  guarded: NonNullable<RouteAuth['guarded']>,
  enforce: boolean,
): void {
  const body = request.body as Record<string, unknown> | undefined;
  const unconditional = guarded.unlessBody?.some((field) => body?.[field] !== undefined) ?? false;
  if (enforce || unconditional) {
    requireScope(request.actor, guarded.scope);
    return;
  }
  try {
    requireScope(request.actor, guarded.scope);
  } catch {
    request.log.warn(
      { route: request.routeOptions.url, credential: request.actor.credential.id, scope: guarded.scope },
      'guarded write would be denied (PADDOCK_ENFORCE_WRITE_SCOPES is off)',
    );
  }
}
