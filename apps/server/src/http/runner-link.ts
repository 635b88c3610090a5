import { createHash, timingSafeEqual } from 'node:crypto';
import fastifyWebsocket from '@fastify/websocket';
import { type Authenticator, admitSelfHostedRunner, type Services, systemClock } from '@paddock/core';
import { runnerLinkPath } from '@paddock/sandbox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RunnerScope } from '../sandbox-hosts/runner-hub/inbound.ts';
import type { RunnerHub } from '../sandbox-hosts/runner-hub/runner-hub.ts';

export interface RunnerLinkOptions {
  /** The deployment's detached runners and their shared token, when it has them. */
  deployment?: { hub: RunnerHub; token: string };
  /** Self-hosted runners (sandbox_e), each with a token bound to its agent. */
  selfHosted: RunnerHub;
  authenticator: Authenticator;
  services: Services;
}

/**
 * The endpoint runners connect to, authenticated before the upgrade: the deployment's runner token
 * admits one of its detached runners; a `publish` token of a sandbox_e agent a self-hosted runner
 * that serves that agent's threads only. Anything else is refused (401/403/404) without an upgrade.
 */
export async function runnerLinkRoutes(app: FastifyInstance, options: RunnerLinkOptions) {
  await app.register(fastifyWebsocket, { options: { maxPayload: 64 * 1024 * 1024 } });
  const expected = options.deployment && digest(options.deployment.token);
  const scopes = new WeakMap<FastifyRequest, RunnerScope>();
  app.get(
    runnerLinkPath,
    {
      websocket: true,
      config: { auth: false },
      schema: { hide: true },
      preValidation: async (request) => {
        const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1] ?? '';
        if (expected && timingSafeEqual(digest(bearer), expected)) return;
        const actor = await options.authenticator.authenticate(request.headers.authorization);
        const { store, log } = options.services;
        scopes.set(request, await admitSelfHostedRunner({ actor, store, clock: systemClock, log }));
      },
    },
    (socket, request) => {
      const scope = scopes.get(request);
      if (scope) options.selfHosted.accept(socket, scope);
      else options.deployment!.hub.accept(socket);
    },
  );
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
