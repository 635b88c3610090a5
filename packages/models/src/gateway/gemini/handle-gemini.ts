import { randomUUID } from 'node:crypto';
import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { z } from 'zod';
import type { ModelRouter } from '../../model-router.ts';
import { type GatewayAnswer, openModelStream, sseFrame, streamParts } from '../gateway-answer.ts';
import { geminiError, geminiModelError } from './gemini-error.ts';
import { geminiRequestSchema, toGeminiCallOptions } from './gemini-request.ts';
import { createGeminiChunkEncoder, type GeminiResponse, toGeminiResponse } from './gemini-response.ts';

const methods = ['generateContent', 'streamGenerateContent'] as const;

/**
 * Serves Gemini's `POST …/models/{model}:generateContent` and `…:streamGenerateContent` from
 * whichever model the router resolves. `modelPath` is the path after `models/`: the model id (which
 * may hold `/`, sent as it is or as `%2F`, decoded by the route) and the method after its last `:`.
 * Framework agnostic: the HTTP route passes the parsed JSON body and an AbortSignal that fires when
 * the client goes away. A stream is SSE (`data: <GenerateContentResponse>` frames), as clients ask
 * with `alt=sse`.
 */
export async function handleGemini(
  router: Pick<ModelRouter, 'resolve'>,
  body: unknown,
  signal: AbortSignal,
  modelPath: string,
): Promise<GatewayAnswer> {
  const colon = modelPath.lastIndexOf(':');
  const modelId = modelPath.slice(0, Math.max(colon, 0));
  const method = colon === -1 ? '' : modelPath.slice(colon + 1);
  if (!modelId || !(methods as readonly string[]).includes(method)) {
    return {
      status: 404,
      json: geminiError(
        404,
        `'${modelPath}' is not served: use models/{model}:generateContent or :streamGenerateContent`,
      ),
    };
  }
  const parsed = geminiRequestSchema.safeParse(body);
  if (!parsed.success) return { status: 400, json: geminiError(400, z.prettifyError(parsed.error)) };
  const model = router.resolve(modelId);
  if (!model) return { status: 404, json: geminiError(404, `models/${modelId} is not found`) };

  const meta = { model: modelId, responseId: randomUUID() };
  const options = toGeminiCallOptions(parsed.data, signal);
  if (method === 'generateContent') {
    try {
      return { status: 200, json: toGeminiResponse(meta, await model.doGenerate(options)) };
    } catch (error) {
      return geminiModelError(error);
    }
  }
  const opened = await openModelStream(model, options);
  if ('error' in opened) return geminiModelError(opened.error);
  return { status: 200, stream: sseFrames(streamParts(opened, signal), createGeminiChunkEncoder(meta)) };
}

/** A failure mid-stream ends it with a `data: {error: …}` frame, which Gemini's clients raise. */
async function* sseFrames(
  parts: AsyncIterable<LanguageModelV4StreamPart>,
  encode: (part: LanguageModelV4StreamPart) => GeminiResponse[],
): AsyncGenerator<string> {
  for await (const part of parts) {
    if (part.type === 'error') {
      yield sseFrame(geminiModelError(part.error).json);
      return;
    }
    for (const chunk of encode(part)) yield sseFrame(chunk);
  }
}

/** A model as Gemini's `GET …/models` lists it. */
export function geminiModel(id: string) {
  return {
    name: `models/${id}`,
    displayName: id,
    supportedGenerationMethods: ['generateContent', 'streamGenerateContent'],
  };
}
