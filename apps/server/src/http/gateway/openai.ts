import type { Services } from '@paddock/core';
import { handleChatCompletions, type ModelRouter } from '@paddock/models';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { rawBody } from '../openapi.ts';
import {
  clientGone,
  gatewayAuth,
  meteredFor,
  requireGatewayCaller,
  sendGatewayAnswer,
} from './gateway-reply.ts';

/**
 * OpenAI's dialect under `/v2/gateway/openai/v1`, and under `/v2/gateway/v1` (its first path, kept
 * as an alias and left out of the API document).
 */
export function openAIGatewayRoutes(app: FastifyInstance, services: Services, router: ModelRouter): void {
  for (const [base, alias] of [
    ['/v2/gateway/openai/v1', false],
    ['/v2/gateway/v1', true],
  ] as const) {
    const documented = <S extends object>(schema: S) => (alias ? { ...schema, hide: true } : schema);
    app.post(
      `${base}/chat/completions`,
      { schema: documented(completionsSchema), config: gatewayAuth },
      async (request, reply) => {
        requireGatewayCaller(request);
        const metered = meteredFor(request, services, router);
        await sendGatewayAnswer(reply, await handleChatCompletions(metered, request.body, clientGone(reply)));
      },
    );

    app.get(`${base}/models`, { schema: documented(modelsSchema), config: gatewayAuth }, async () => ({
      object: 'list' as const,
      data: router.list().map((id) => ({ id, object: 'model' as const, owned_by: 'paddock' })),
    }));
  }
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
