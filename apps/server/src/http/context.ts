import { type Ctx, type Services, systemClock } from '@paddock/core';
import type { FastifyRequest } from 'fastify';

/** A core verb's context for this request (its services go beside it: `verb(ctxOf(...), services, input)`). */
export function ctxOf(services: Pick<Services, 'store' | 'log'>, request: FastifyRequest): Ctx {
  return { actor: request.actor, store: services.store, clock: systemClock, log: services.log };
}
