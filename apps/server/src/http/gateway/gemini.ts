import type { Services } from '@paddock/core';
import { PaddockError } from '@paddock/core';
import { geminiError, geminiModel, handleGemini, type ModelRouter } from '@paddock/models';
import { errorStatus } from '@paddock/protocol';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { clientGone } from '../context.ts';
import { rawBody } from '../openapi.ts';
import { gatewayAuth, meteredFor, requireGatewayCaller, sendGatewayAnswer } from './gateway-reply.ts';

/**
 * Gemini's dialect under `/v2/gateway/gemini/v1beta`, and under `/v2/gateway/gemini/v1` (the same
 * routes, left out of the API document): Google's clients take `/v2/gateway/gemini` as their base
 * URL and add their API version, `v1beta` for gemini-cli, `v1` for `@google/genai` 3.x.
 * `models/{model}` holds a literal `:` (`scripted:generateContent`), split off by the handler at the
 * last `:`. A model id holding `/` is sent as `%2F` (`openai%2Fgpt-4.1`), or as it is, as Google's
 * clients do (`models/openai/gpt-4.1:generateContent`): a `models/*` route, left out of the
 * document, takes that. Every refusal on these routes, Paddock's own (401, 403) included, has
 * Gemini's error body, so Gemini clients read it.
 */
export function geminiGatewayRoutes(app: FastifyInstance, services: Services, router: ModelRouter): void {
  void app.register(async (gemini) => {
    gemini.setErrorHandler(geminiErrorHandler);
    for (const [version, alias] of [
      ['v1beta', false],
      ['v1', true],
    ] as const) {
      const base = `/v2/gateway/gemini/${version}`;
      gemini.get(
        `${base}/models`,
        { schema: alias ? { ...listSchema, hide: true } : listSchema, config: gatewayAuth },
        async () => ({ models: router.list().map(geminiModel) }),
      );

      for (const [path, hidden] of [
        [`${base}/models/:model`, alias],
        [`${base}/models/*`, true],
      ] as const) {
        const documented = <S extends object>(schema: S) => ({
          ...schema,
          ...(path.endsWith('*') ? { params: anyModelPath } : {}),
          ...(hidden ? { hide: true } : {}),
        });
        gemini.post(
          path,
          { schema: documented(generateSchema), config: gatewayAuth },
          async (request, reply) => {
            requireGatewayCaller(request);
            const metered = meteredFor(request, services, router);
            const answer = await handleGemini(metered, request.body, clientGone(reply), modelPath(request));
            await sendGatewayAnswer(reply, answer, services.turnTrace);
          },
        );
        gemini.get(path, { schema: documented(getSchema), config: gatewayAuth }, async (request, reply) => {
          const id = modelPath(request);
          if (router.resolve(id)) return geminiModel(id);
          return reply.code(404).send(geminiError(404, `models/${id} is not found`));
        });
      }
    }
  });
}

const anyModelPath = z.object({ '*': z.string() });

/** What follows `models/` in the path, decoded. */
function modelPath(request: FastifyRequest): string {
  const params = request.params as { model?: string; '*'?: string };
  return params.model ?? params['*'] ?? '';
}

/** Paddock's errors in Gemini's body: `{ error: { code, message, status } }`. */
function geminiErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const send = (status: number, message: string) => reply.code(status).send(geminiError(status, message));
  if (hasZodFastifySchemaValidationErrors(error)) return send(400, error.message);
  const known: unknown = error;
  if (known instanceof PaddockError) {
    if (known.retryAfter !== undefined) void reply.header('Retry-After', String(known.retryAfter));
    return send(errorStatus[known.code], known.message);
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return send(413, 'Request body is too large');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return send(415, 'Content-Type must be application/json');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return send(400, 'Body is not valid JSON');
  }
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return send(error.statusCode, error.message);
  }
  request.log.error({ err: error }, 'unhandled error');
  return send(500, 'Internal Server Error');
}

const errorBody = z.object({
  error: z.object({ code: z.number(), message: z.string(), status: z.string() }),
});
const geminiErrorAnswer = (description: string) => ({
  description,
  content: { 'application/json': { schema: errorBody } },
});
// Paddock's own refusals (a missing or invalid key, a forbidden credential, an unavailable
// database) have Gemini's body on these routes too.
const refusals = {
  401: geminiErrorAnswer('No key, or not a valid one (`x-goog-api-key`, or a bearer token)'),
  403: geminiErrorAnswer('A credential that may not call the model gateway (an agent key)'),
  503: geminiErrorAnswer('Authorization is unavailable for now; a retry may succeed'),
};

const generateSchema = {
  operationId: 'geminiGenerateContent',
  summary:
    'A Gemini generateContent (`{model}:generateContent`), or its chunks as server-sent events (`{model}:streamGenerateContent?alt=sse`)',
  params: z.object({
    model: z.string().meta({
      description:
        '`{model}:generateContent` or `{model}:streamGenerateContent`; a model id holding `/` as `%2F`',
    }),
  }),
  querystring: z.looseObject({ alt: z.string().optional() }),
  response: {
    200: rawBody(
      'A GenerateContentResponse, or its chunks as server-sent events',
      'application/json',
      'text/event-stream',
    ),
    ...refusals,
    400: geminiErrorAnswer('Not a valid request'),
    404: geminiErrorAnswer('No such model, or a method the gateway does not serve'),
    '4xx': geminiErrorAnswer("A call the model refused for good (422), or the model provider's own 4xx"),
    502: geminiErrorAnswer('The model call failed; a retry may succeed'),
  },
} as const;

const model = z.object({
  name: z.string(),
  displayName: z.string(),
  supportedGenerationMethods: z.array(z.string()),
});

const listSchema = {
  operationId: 'geminiListModels',
  summary: 'The models the gateway serves, as Gemini lists them',
  querystring: z.looseObject({ pageSize: z.string().optional(), pageToken: z.string().optional() }),
  response: {
    200: z.object({ models: z.array(model) }),
    ...refusals,
    400: geminiErrorAnswer('Not a valid request'),
  },
} as const;

const getSchema = {
  operationId: 'geminiGetModel',
  summary: 'One model the gateway serves, as Gemini describes it',
  params: z.object({ model: z.string().meta({ description: 'The model id; one holding `/` as `%2F`' }) }),
  response: {
    200: model,
    ...refusals,
    400: geminiErrorAnswer('Not a valid request'),
    404: geminiErrorAnswer('No such model'),
  },
} as const;
