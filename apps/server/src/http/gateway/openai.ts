import { PaddockError, type Services } from '@paddock/core';
import { handleChatCompletions, handleResponses, type ModelRouter } from '@paddock/models';
import { errorStatus } from '@paddock/protocol';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { clientGone } from '../context.ts';
import { rawBody } from '../openapi.ts';
import { gatewayAuth, meteredFor, requireGatewayCaller, sendGatewayAnswer } from './gateway-reply.ts';

/**
 * OpenAI's dialect under `/v2/gateway/openai/v1`, and under `/v2/gateway/v1` (its first path, kept
 * as an alias and left out of the API document): Chat Completions, Responses and the model list.
 * Its routes answer Paddock's own refusals (401, 403, 503) in OpenAI's error body too, so OpenAI
 * clients read them; other errors keep Paddock's body.
 */
export function openAIGatewayRoutes(app: FastifyInstance, services: Services, router: ModelRouter): void {
  void app.register(async (openai) => {
    openai.setErrorHandler((error, _request, reply) => {
      if (!(error instanceof PaddockError)) throw error;
      if (error.retryAfter !== undefined) void reply.header('Retry-After', String(error.retryAfter));
      const status = errorStatus[error.code];
      return reply
        .code(status)
        .send({ error: { message: error.message, type: errorType(status), code: error.code } });
    });
    for (const [base, alias] of [
      ['/v2/gateway/openai/v1', false],
      ['/v2/gateway/v1', true],
    ] as const) {
      const documented = <S extends object>(schema: S) => (alias ? { ...schema, hide: true } : schema);
      openai.post(
        `${base}/chat/completions`,
        { schema: documented(completionsSchema), config: gatewayAuth },
        async (request, reply) => {
          requireGatewayCaller(request);
          const metered = meteredFor(request, services, router);
          await sendGatewayAnswer(
            reply,
            await handleChatCompletions(metered, request.body, clientGone(reply)),
            services.turnTrace,
          );
        },
      );

      openai.post(
        `${base}/responses`,
        { schema: documented(responsesSchema), config: gatewayAuth },
        async (request, reply) => {
          requireGatewayCaller(request);
          const metered = meteredFor(request, services, router);
          await sendGatewayAnswer(
            reply,
            await handleResponses(metered, request.body, clientGone(reply)),
            services.turnTrace,
          );
        },
      );

      // Codex tries Responses over a WebSocket first; refusing the upgrade at once (426, no upgrade)
      // makes it fall back to HTTP. A plain GET is refused as well (405). Not an operation, so left
      // out of the API document.
      openai.get(
        `${base}/responses`,
        { schema: { hide: true }, config: gatewayAuth },
        async (request, reply) => {
          const upgrade = request.headers.upgrade?.toLowerCase() === 'websocket';
          const message = upgrade
            ? 'Responses over WebSocket are not served: POST /responses over HTTP'
            : 'Create a response with POST /responses; the gateway stores no responses to list';
          return reply
            .code(upgrade ? 426 : 405)
            .header('allow', 'POST')
            .header('connection', 'close')
            .send({ error: { message, type: 'invalid_request_error', code: 'unsupported' } });
        },
      );

      openai.get(`${base}/models`, { schema: documented(modelsSchema), config: gatewayAuth }, async () => ({
        object: 'list' as const,
        data: router.list().map((id) => ({ id, object: 'model' as const, owned_by: 'paddock' })),
      }));
    }
  });
}

function errorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 429) return 'rate_limit_error';
  return status >= 500 ? 'server_error' : 'invalid_request_error';
}

const openAIErrorBody = z.object({
  error: z.object({ message: z.string(), type: z.string(), code: z.string() }),
});

/** The gateway's own refusals have OpenAI's error body, so OpenAI clients read them. */
const openAIError = (description: string) => ({
  description,
  content: { 'application/json': { schema: openAIErrorBody } },
});

/** Paddock's refusals on these routes, in OpenAI's body. */
const refusals = {
  401: openAIError('No credential, or not a valid one (`missing_token`, `invalid_token`)'),
  403: openAIError(
    'A credential the gateway does not take: an agent key (`forbidden`), a token without publish (`scope_denied`)',
  ),
  503: openAIError('Authorization temporarily unavailable (`unavailable`); retry after Retry-After'),
} as const;

const completionsSchema = {
  operationId: 'createChatCompletion',
  summary: 'An OpenAI-compatible chat completion, streamed when stream is true',
  response: {
    200: rawBody(
      'A chat completion, or its chunks as server-sent events',
      'application/json',
      'text/event-stream',
    ),
    ...refusals,
    '4xx': openAIError(
      "Refused: not a valid request (400), no such model (404), a call the model refused for good (422), or the model provider's own 4xx",
    ),
    502: openAIError('The model call failed; a retry may succeed'),
  },
} as const;

const responsesSchema = {
  operationId: 'createResponse',
  summary: 'An OpenAI-compatible response (Responses API), streamed as its events when stream is true',
  description:
    'Stateless: nothing is stored, so `previous_response_id` is refused (400) and `input` carries the whole conversation. Function tools are served; other tool types are ignored.',
  response: {
    200: rawBody(
      'A Response object, or its events as server-sent events ending with response.completed, response.incomplete or response.failed',
      'application/json',
      'text/event-stream',
    ),
    ...refusals,
    '4xx': openAIError(
      "Refused: not a valid request or a previous_response_id (400), no such model (404), a call the model refused for good (422), or the model provider's own 4xx",
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
    ...refusals,
  },
} as const;
