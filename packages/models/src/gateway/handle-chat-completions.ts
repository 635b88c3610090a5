import { randomUUID } from 'node:crypto';
import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { z } from 'zod';
import type { ModelRouter } from '../model-router.ts';
import { chatRequestSchema, toCallOptions } from './chat-request.ts';
import { type ChatCompletionChunk, createChunkEncoder, toChatCompletion } from './chat-response.ts';
import { errorMessage, modelErrorResponse, openAIError } from './openai-error.ts';

export type ChatCompletionsResponse =
  | { status: number; json: unknown }
  /** `stream` yields whole SSE frames: `data: {...}\n\n`, ending with `data: [DONE]\n\n`. */
  | { status: 200; stream: AsyncIterable<string> };

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

  let reader: ReadableStreamDefaultReader<LanguageModelV4StreamPart>;
  const head: LanguageModelV4StreamPart[] = [];
  try {
    reader = (await model.doStream(options)).stream.getReader();
  } catch (error) {
    return modelErrorResponse(error);
  }
  // Read up to the first output so that a failure before anything is said still gets an HTTP status.
  try {
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      if (next.value.type === 'error') {
        void reader.cancel().catch(() => {});
        return modelErrorResponse(next.value.error);
      }
      head.push(next.value);
      if (!['stream-start', 'response-metadata', 'raw'].includes(next.value.type)) break;
    }
  } catch (error) {
    void reader.cancel().catch(() => {});
    return modelErrorResponse(error);
  }
  const encode = createChunkEncoder(meta, request.stream_options?.include_usage === true);
  return { status: 200, stream: sseFrames(head, reader, encode, signal) };
}

async function* sseFrames(
  head: LanguageModelV4StreamPart[],
  reader: ReadableStreamDefaultReader<LanguageModelV4StreamPart>,
  encode: (part: LanguageModelV4StreamPart) => ChatCompletionChunk[],
  signal: AbortSignal,
): AsyncGenerator<string> {
  try {
    for (const part of head) for (const chunk of encode(part)) yield frame(chunk);
    for (;;) {
      let next: ReadableStreamReadResult<LanguageModelV4StreamPart>;
      try {
        next = await reader.read();
      } catch (error) {
        if (!signal.aborted) yield frame(openAIError(errorMessage(error), 'api_error', 'model_error'));
        return;
      }
      if (next.done) break;
      if (next.value.type === 'error') {
        yield frame(openAIError(errorMessage(next.value.error), 'api_error', 'model_error'));
        return;
      }
      for (const chunk of encode(next.value)) yield frame(chunk);
    }
    yield 'data: [DONE]\n\n';
  } finally {
    // Stops the upstream call when the client leaves early or the stream failed.
    void reader.cancel().catch(() => {});
  }
}

function frame(data: unknown): string {
  return `data: ${JSON.stringify(data)}\n\n`;
}
