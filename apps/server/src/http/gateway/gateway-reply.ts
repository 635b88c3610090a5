import { once } from 'node:events';
import { PaddockError } from '@paddock/core';
import type { GatewayAnswer } from '@paddock/models';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * Who may call the gateway: any credential that may run turns (a thread's token, a personal token),
 * not an agent key.
 */
export function requireGatewayCaller(request: FastifyRequest): void {
  if (request.actor.credential.binding.type === 'agent') {
    throw new PaddockError('forbidden', 'the model gateway takes thread tokens and personal access tokens');
  }
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

/** Sends a dialect handler's answer: its JSON with its status, or its server-sent event frames. */
export async function sendGatewayAnswer(reply: FastifyReply, answer: GatewayAnswer): Promise<void> {
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
  for await (const frame of answer.stream) {
    if (reply.raw.destroyed) break;
    if (!reply.raw.write(frame)) await once(reply.raw, 'drain');
  }
  reply.raw.end();
}

/** Every gateway route takes the token in whichever header its dialect's clients send it. */
export const gatewayAuth = { auth: { keyHeaders: ['x-api-key', 'x-goog-api-key'] } } as const;
