import type { Ctx, Services } from '@paddock/core';
import type { FastifyRequest } from 'fastify';

/** A core verb's context for this request. */
export function ctxOf(services: Services, request: FastifyRequest): Ctx {
  return { ...services, actor: request.actor };
}
