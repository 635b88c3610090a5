import { once } from 'node:events';
import {
  noTurnTrace,
  PaddockError,
  recordModelUsage,
  type Services,
  type TurnTrace,
  threadAgentModel,
} from '@paddock/core';
import { type GatewayAnswer, type ModelRouter, meteredRouter, threadAgentRouter } from '@paddock/models';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RouteAuth } from '../auth.ts';
import { ctxOf } from '../context.ts';

/** Agent keys may not call the gateway: only a thread's token, a personal token or a login session. */
export function requireGatewayCaller(request: FastifyRequest): void {
  if (request.actor.credential.binding.type === 'agent') {
    throw new PaddockError('forbidden', 'the model gateway takes thread tokens and personal access tokens');
  }
}

/**
 * The router a request's model calls go through: each call's usage is counted to the caller's
 * organization and thread (see `recordModelUsage`). A failure to count is logged; the answer goes on.
 * A thread's token may ask for the `thread` model: its agent's model and instructions.
 */
export function meteredFor(
  request: FastifyRequest,
  services: Pick<Services, 'store' | 'log' | 'events' | 'defaultModel' | 'turnTrace'>,
  router: Pick<ModelRouter, 'resolve'>,
): Pick<ModelRouter, 'resolve'> {
  const ctx = ctxOf(services, request);
  const caller = request.actor.credential.binding;
  if (caller.type === 'thread') services.turnTrace.mark(caller.threadId, 'model_request');
  const metered = meteredRouter(router, (usage) =>
    recordModelUsage(ctx, services, usage).catch((error: unknown) =>
      request.log.error({ err: error, model: usage.model }, 'model usage not recorded'),
    ),
  );
  const binding = request.actor.credential.binding;
  return threadAgentRouter(
    metered,
    binding.type === 'thread' ? () => threadAgentModel(ctx, services, binding.threadId) : undefined,
  );
}

/**
 * Sends a dialect handler's answer: its JSON with its status, or its server-sent event frames (the
 * first marked for a thread's token, see `TurnTrace`).
 */
export async function sendGatewayAnswer(
  reply: FastifyReply,
  answer: GatewayAnswer,
  trace: TurnTrace = noTurnTrace,
): Promise<void> {
  // The statuses the routes' schemas document: 200, a 4xx or 502.
  if ('json' in answer) {
    await reply.code(answer.status as 502).send(answer.json);
    return;
  }
  reply.hijack();
  reply.raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
  });
  const caller = reply.request.actor.credential.binding;
  let first = true;
  for await (const frame of answer.stream) {
    if (reply.raw.destroyed) break;
    if (!reply.raw.write(frame)) await once(reply.raw, 'drain');
    if (first && caller.type === 'thread') trace.mark(caller.threadId, 'model_first_chunk');
    first = false;
  }
  reply.raw.end();
}

/**
 * Every gateway route needs a credential that may run turns (`publish`: a thread's token, a
 * personal token with it) and takes it in whichever header its dialect's clients send it.
 */
export const gatewayAuth = {
  auth: { scope: 'publish', keyHeaders: ['x-api-key', 'x-goog-api-key'] },
} as const satisfies { auth: RouteAuth };
