import { randomUUID } from 'node:crypto';
import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { z } from 'zod';
import type { ModelRouter } from '../../model-router.ts';
import { type GatewayAnswer, openModelStream, sseFrame, streamParts } from '../gateway-answer.ts';
import { errorMessage } from '../model-error.ts';
import { anthropicError, anthropicModelError } from './anthropic-error.ts';
import { type MessagesRequest, messagesRequestSchema, toAnthropicCallOptions } from './messages-request.ts';
import {
  type AnthropicStreamEvent,
  createMessageEventEncoder,
  toAnthropicMessage,
} from './messages-response.ts';

/**
 * Serves Anthropic's `POST /v1/messages` from whichever model the router resolves. Framework
 * agnostic: the HTTP route passes the parsed JSON body and an AbortSignal that fires when the
 * client goes away, and writes back the JSON or the SSE frames (`event: <type>\ndata: …\n\n`).
 */
export async function handleAnthropicMessages(
  router: Pick<ModelRouter, 'resolve'>,
  body: unknown,
  signal: AbortSignal,
): Promise<GatewayAnswer> {
  const parsed = parseRequest(router, body);
  if ('answer' in parsed) return parsed.answer;
  const { request, model } = parsed;
  const meta = { id: `msg_${randomUUID().replaceAll('-', '')}`, model: request.model };
  const options = toAnthropicCallOptions(request, signal);

  if (!request.stream) {
    try {
      return { status: 200, json: toAnthropicMessage(meta, await model.doGenerate(options)) };
    } catch (error) {
      return anthropicModelError(error);
    }
  }

  const opened = await openModelStream(model, options);
  if ('error' in opened) return anthropicModelError(opened.error);
  return { status: 200, stream: sseFrames(streamParts(opened, signal), createMessageEventEncoder(meta)) };
}

/**
 * Serves `POST /v1/messages/count_tokens` with an estimate, the same for every model: a quarter of
 * the characters of the JSON of the request's system text, messages and tools (at least 1), as the
 * scripted model counts its usage. Enough for a client deciding when to compact its context.
 */
export async function handleAnthropicCountTokens(
  router: Pick<ModelRouter, 'resolve'>,
  body: unknown,
): Promise<GatewayAnswer> {
  const parsed = parseRequest(router, body);
  if ('answer' in parsed) return parsed.answer;
  const { system, messages, tools } = parsed.request;
  const characters = JSON.stringify({ system, messages, tools }).length;
  return { status: 200, json: { input_tokens: Math.max(1, Math.ceil(characters / 4)) } };
}

function parseRequest(
  router: Pick<ModelRouter, 'resolve'>,
  body: unknown,
):
  | { answer: GatewayAnswer }
  | { request: MessagesRequest; model: NonNullable<ReturnType<ModelRouter['resolve']>> } {
  const parsed = messagesRequestSchema.safeParse(body);
  if (!parsed.success) {
    return {
      answer: { status: 400, json: anthropicError('invalid_request_error', z.prettifyError(parsed.error)) },
    };
  }
  const model = router.resolve(parsed.data.model);
  if (!model) {
    return {
      answer: {
        status: 404,
        json: anthropicError(
          'not_found_error',
          `model: ${parsed.data.model} is not a model this gateway serves`,
        ),
      },
    };
  }
  return { request: parsed.data, model };
}

async function* sseFrames(
  parts: AsyncIterable<LanguageModelV4StreamPart>,
  encode: (part: LanguageModelV4StreamPart) => AnthropicStreamEvent[],
): AsyncGenerator<string> {
  for await (const part of parts) {
    if (part.type === 'error') {
      yield sseFrame(anthropicError('api_error', errorMessage(part.error)), 'error');
      return;
    }
    for (const event of encode(part)) yield sseFrame(event, event.type);
  }
}
