import type { Services } from '@paddock/core';
import {
  anthropicError,
  anthropicErrorType,
  handleAnthropicCountTokens,
  handleAnthropicMessages,
  type ModelRouter,
} from '@paddock/models';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { clientGone } from '../context.ts';
import { rawBody } from '../openapi.ts';
import { gatewayAuth, meteredFor, requireGatewayCaller, sendGatewayAnswer } from './gateway-reply.ts';

/** Where Anthropic's clients point their base URL: the SDK's `baseURL`, `ANTHROPIC_BASE_URL`. */
const anthropicGatewayBase = '/v2/gateway/anthropic';

/**
 * Anthropic's Messages dialect under `/v2/gateway/anthropic`, as its clients call it: the token in
 * `x-api-key` or `Authorization: Bearer`, `?beta=true` and the `anthropic-*` headers ignored. The
 * base URL itself answers (with the gateway's credential like the rest) since Claude Code probes it
 * with a HEAD. Every error, Paddock's own refusals included, has Anthropic's error body.
 */
export function anthropicGatewayRoutes(app: FastifyInstance, services: Services, router: ModelRouter): void {
  void app.register(
    async (anthropic) => {
      anthropic.addHook('onSend', async (_request, reply, payload) => withAnthropicError(reply, payload));
      anthropic.setNotFoundHandler((_request, reply) => {
        void reply.code(404).send({ detail: 'Not Found' });
      });

      anthropic.post(
        '/v1/messages',
        { schema: messagesSchema, config: gatewayAuth },
        async (request, reply) => {
          requireGatewayCaller(request);
          await sendGatewayAnswer(
            reply,
            await handleAnthropicMessages(
              meteredFor(request, services, router),
              request.body,
              clientGone(reply),
            ),
            services.turnTrace,
          );
        },
      );

      anthropic.post(
        '/v1/messages/count_tokens',
        { schema: countTokensSchema, config: gatewayAuth },
        async (request, reply) => {
          requireGatewayCaller(request);
          await sendGatewayAnswer(reply, await handleAnthropicCountTokens(router, request.body));
        },
      );

      anthropic.get('/v1/models', { schema: modelsSchema, config: gatewayAuth }, async () => {
        const ids = router.list();
        return {
          // When a model came out is not known here: the Unix epoch stands for it.
          data: ids.map((id) => ({ type: 'model' as const, id, display_name: id, created_at: unknownDate })),
          has_more: false,
          first_id: ids.at(0) ?? null,
          last_id: ids.at(-1) ?? null,
        };
      });

      // The base URL, with and without its trailing slash (a HEAD is answered by the GET's route).
      for (const [url, prefixTrailingSlash, hide] of [
        ['/', 'no-slash', false],
        ['/', 'slash', true],
      ] as const) {
        anthropic.get(
          url,
          { prefixTrailingSlash, schema: { ...baseSchema, ...(hide ? { hide } : {}) }, config: gatewayAuth },
          async (request) => {
            requireGatewayCaller(request);
            return { dialect: 'anthropic' as const, endpoints: [...servedEndpoints] };
          },
        );
      }
    },
    { prefix: anthropicGatewayBase },
  );
}

const unknownDate = '1970-01-01T00:00:00Z';
const servedEndpoints = ['/v1/messages', '/v1/messages/count_tokens', '/v1/models'] as const;

/**
 * Paddock's own error answers on these routes (`{detail}`: a missing or bad token, a refused
 * credential, an unknown path) get Anthropic's `type` and `error` beside their `detail`, so
 * Anthropic's clients read the error's type and message and Paddock's body stays what it is.
 */
function withAnthropicError(reply: FastifyReply, payload: unknown): unknown {
  if (reply.statusCode < 400 || typeof payload !== 'string') return payload;
  if (!String(reply.getHeader('content-type') ?? '').startsWith('application/json')) return payload;
  let body: unknown;
  try {
    body = JSON.parse(payload);
  } catch {
    return payload;
  }
  if (typeof body !== 'object' || body === null || !('detail' in body) || 'error' in body) return payload;
  const { detail } = body;
  const message =
    typeof detail === 'string'
      ? detail
      : typeof detail === 'object' &&
          detail !== null &&
          'message' in detail &&
          typeof detail.message === 'string'
        ? detail.message
        : JSON.stringify(detail);
  return JSON.stringify({ ...anthropicError(anthropicErrorType(reply.statusCode), message), detail });
}

/** The answers' error body: Anthropic's, with Paddock's `detail` on the refusals Paddock makes itself. */
const anthropicErrorAnswer = (description: string) => ({
  description,
  content: {
    'application/json': {
      schema: z.object({
        type: z.literal('error'),
        error: z.object({ type: z.string(), message: z.string() }),
      }),
    },
  },
});

const messagesSchema = {
  operationId: 'createAnthropicMessage',
  summary:
    "An Anthropic-compatible message (Messages API), streamed as Anthropic's events when stream is true",
  errors: ['forbidden'],
  response: {
    200: rawBody('A message, or its events as server-sent events', 'application/json', 'text/event-stream'),
    '4xx': anthropicErrorAnswer(
      "Refused: not a valid request (400), no such model (404), a call the model refused for good (422), or the model provider's own 4xx",
    ),
    502: anthropicErrorAnswer('The model call failed; a retry may succeed'),
  },
} as const;

const countTokensSchema = {
  operationId: 'countAnthropicTokens',
  summary:
    "An estimate of a message request's input tokens: a quarter of the characters of its system text, messages and tools as JSON",
  errors: ['forbidden'],
  response: {
    200: z.object({ input_tokens: z.number().int() }),
    '4xx': anthropicErrorAnswer('Refused: not a valid request (400), no such model (404)'),
  },
} as const;

const modelsSchema = {
  operationId: 'listAnthropicModels',
  summary: "The models the gateway serves, in Anthropic's shape",
  response: {
    200: z.object({
      data: z.array(
        z.object({
          type: z.literal('model'),
          id: z.string(),
          display_name: z.string(),
          created_at: z.string(),
        }),
      ),
      has_more: z.literal(false),
      first_id: z.string().nullable(),
      last_id: z.string().nullable(),
    }),
  },
} as const;

const baseSchema = {
  operationId: 'getAnthropicGateway',
  summary: "The Anthropic dialect's base URL (clients probe it with a HEAD): what it serves",
  errors: ['forbidden'],
  response: {
    200: z.object({ dialect: z.literal('anthropic'), endpoints: z.array(z.string()) }),
  },
} as const;
