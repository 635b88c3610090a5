import { randomUUID } from 'node:crypto';
import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { z } from 'zod';
import type { ModelRouter } from '../model-router.ts';
import { chatRequestSchema, toCallOptions } from './chat-request.ts';
import { type ChatCompletionChunk, createChunkEncoder, toChatCompletion } from './chat-response.ts';
import { type GatewayAnswer, openModelStream, sseFrame, streamParts } from './gateway-answer.ts';
import { errorMessage } from './model-error.ts';
import { modelErrorResponse, openAIError } from './openai-error.ts';

/** `stream` yields whole SSE frames: `data: {...}\n\n`, ending with `data: [DONE]\n\n`. */
export type ChatCompletionsResponse = GatewayAnswer;

/**
 * Serves OpenAI's `POST /chat/completions` from whichever model the router resolves. Framework
 * agnostic: the HTTP route passes the parsed JSON body and an AbortSignal that fires when the
 * client goes away, and writes back the JSON or the SSE frames.
 */
export async function handleChatCompletions(
  router: Pick<ModelRouter, 'resolve'>,
  body: unknown,
  signal: AbortSignal,
): Promise<ChatCompletionsResponse> {
  const parsed = chatRequestSchema.safeParse(body);
  if (!parsed.success) {
    return {
      status: 400,
      json: openAIError(z.prettifyError(parsed.error), 'invalid_request_error', 'invalid_request'),
    };
  }
  const request = parsed.data;
  const model = router.resolve(request.model);
  if (!model) {
    return {
      status: 404,
      json: openAIError(
        `The model '${request.model}' does not exist`,
        'invalid_request_error',
        'model_not_found',
      ),
    };
  }
  const meta = {
    id: `chatcmpl-${randomUUID()}`,
    model: request.model,
    created: Math.floor(Date.now() / 1000),
  };
  const options = toCallOptions(request, signal);

  if (!request.stream) {
    try {
      return { status: 200, json: toChatCompletion(meta, await model.doGenerate(options)) };
    } catch (error) {
      return modelErrorResponse(error);
    }
  }

  const opened = await openModelStream(model, options);
  if ('error' in opened) return modelErrorResponse(opened.error);
  const encode = createChunkEncoder(meta, request.stream_options?.include_usage === true);
  return { status: 200, stream: sseFrames(streamParts(opened, signal), encode) };
}

async function* sseFrames(
  parts: AsyncIterable<LanguageModelV4StreamPart>,
  encode: (part: LanguageModelV4StreamPart) => ChatCompletionChunk[],
): AsyncGenerator<string> {
  for await (const part of parts) {
    if (part.type === 'error') {
      yield sseFrame(openAIError(errorMessage(part.error), 'api_error', 'model_error'));
      return;
    }
    for (const chunk of encode(part)) yield sseFrame(chunk);
  }
  yield 'data: [DONE]\n\n';
}
