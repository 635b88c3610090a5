import { PaddockError } from '@paddock/core';
import { handleChatCompletions, type ModelRouter } from '@paddock/models';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { rawBody } from './openapi.ts';

/**
 * The model gateway: an OpenAI-compatible `chat/completions` endpoint. Sandboxes reach it with
 * their thread token, so upstream provider keys never enter a sandbox.
 */
export function gatewayRoutes(app: FastifyInstance, router: ModelRouter): void {
  app.post('/v2/gateway/v1/chat/completions', { schema: completionsSchema }, async (request, reply) => {
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
    // A status the schema documents: 200, a 4xx or 502.
    if ('json' in answer) return reply.code(answer.status as 502).send(answer.json);
    reply.hijack();
    reply.raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
    });
    for await (const frame of answer.stream) reply.raw.write(frame);
    reply.raw.end();
  });

  app.get('/v2/gateway/v1/models', { schema: modelsSchema }, async () => ({
    object: 'list' as const,
    data: router.list().map((id) => ({ id, object: 'model' as const, owned_by: 'paddock' })),
  }));
}

/** The gateway's own refusals have OpenAI's error body, so OpenAI clients read them. */
const openAIError = (description: string) => ({
  description,
  content: {
    'application/json': {
      schema: z.object({ error: z.object({ message: z.string(), type: z.string(), code: z.string() }) }),
    },
  },
});

const completionsSchema = {
  operationId: 'createChatCompletion',
  summary: 'An OpenAI-compatible chat completion, streamed when stream is true',
  errors: ['forbidden'],
  response: {
    200: rawBody(
      'A chat completion, or its chunks as server-sent events',
      'application/json',
      'text/event-stream',
    ),
    '4xx': openAIError(
      "Refused: not a valid request (400), no such model (404), a call the model refused for good (422), or the model provider's own 4xx",
    ),
    502: openAIError('The model call failed; a retry may succeed'),
  },
} as const;

const modelsSchema = {
  operationId: 'listModels',
  summary: 'The models the gateway serves',
  response: {
    200: z.object({
      object: z.literal('list'),
      data: z.array(z.object({ id: z.string(), object: z.literal('model'), owned_by: z.string() })),
    }),
  },
} as const;
