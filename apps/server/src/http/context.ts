import { type Ctx, type Services, systemClock } from '@paddock/core';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** A core verb's context for this request (its services go beside it: `verb(ctxOf(...), services, input)`). */
export function ctxOf(services: Pick<Services, 'store' | 'log'>, request: FastifyRequest): Ctx {
  return { actor: request.actor, store: services.store, clock: systemClock, log: services.log };
}

/**
 * Aborts when the client goes away before the answer finished, to stop the model call. (The
 * request stream's own 'close' fires as soon as its body is read, so it cannot say that.)
 */
export function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}
