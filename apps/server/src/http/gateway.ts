import { PaddockError } from '@paddock/core';
import { handleChatCompletions, type ModelRouter } from '@paddock/models';
import type { FastifyInstance } from 'fastify';

/**
 * The model gateway: an OpenAI-compatible `chat/completions` endpoint. Sandboxes reach it with
 * their thread token, so upstream provider keys never enter a sandbox.
 */
export function gatewayRoutes(app: FastifyInstance, router: ModelRouter): void {
  app.post('/v2/gateway/v1/chat/completions', async (request, reply) => {
    if (request.actor.credential.binding.type === 'agent') {
      throw new PaddockError('forbidden', 'the model gateway takes thread tokens and personal access tokens');
    }
    // The response closing before it finished means the client went away: stop the model call.
    // (The request stream's own 'close' fires as soon as its body is read, so it cannot say that.)
    const controller = new AbortController();
    reply.raw.on('close', () => {
      if (!reply.raw.writableFinished) controller.abort();
    });
    const answer = await handleChatCompletions(router, request.body, controller.signal);
    if ('json' in answer) return reply.code(answer.status).send(answer.json);
    reply.hijack();
    reply.raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
    });
    for await (const frame of answer.stream) reply.raw.write(frame);
    reply.raw.end();
  });

  app.get('/v2/gateway/v1/models', async () => ({
    object: 'list',
    data: router.list().map((id) => ({ id, object: 'model', owned_by: 'paddock' })),
  }));
}
