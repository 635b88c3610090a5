import { createHash, timingSafeEqual } from 'node:crypto';
import fastifyWebsocket from '@fastify/websocket';
import { runnerLinkPath } from '@paddock/sandbox';
import type { FastifyInstance } from 'fastify';
import type { RunnerHub } from '../runner-hub.ts';

/** The endpoint detached runners connect to, authenticated by the runner token before the upgrade. */
export async function runnerLinkRoutes(app: FastifyInstance, options: { hub: RunnerHub; token: string }) {
  await app.register(fastifyWebsocket, { options: { maxPayload: 64 * 1024 * 1024 } });
  const expected = digest(options.token);
  app.get(
    runnerLinkPath,
    {
      websocket: true,
      config: { auth: false },
      schema: { hide: true },
      preValidation: async (request, reply) => {
        const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1] ?? '';
        if (!timingSafeEqual(digest(bearer), expected)) {
          await reply.code(401).send({ detail: 'invalid runner token' });
        }
      },
    },
    (socket) => options.hub.accept(socket),
  );
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
