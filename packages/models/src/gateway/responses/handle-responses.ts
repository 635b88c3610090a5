import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { z } from 'zod';
import type { ModelRouter } from '../../model-router.ts';
import { type GatewayAnswer, openModelStream, sseFrame, streamParts } from '../gateway-answer.ts';
import { modelErrorResponse, openAIError } from '../openai-error.ts';
import {
  namespacedNames,
  type ResponsesRequest,
  responsesRequestSchema,
  servedTools,
  toResponsesCallOptions,
} from './responses-request.ts';
import { itemId, type ResponseMeta, toResponseObject } from './responses-response.ts';
import { createResponseEventEncoder, type ResponseStreamEvent } from './responses-stream.ts';

/**
 * Serves OpenAI's `POST /responses` from whichever model the router resolves, statelessly: nothing
 * is stored, so `previous_response_id` is refused and every request carries its whole input.
 * Framework agnostic, as `handleChatCompletions` is; a stream yields `event: <type>\ndata: {...}`
 * frames and ends with `response.completed`, `response.incomplete` or `response.failed`.
 */
export async function handleResponses(
  router: Pick<ModelRouter, 'resolve'>,
  body: unknown,
  signal: AbortSignal,
): Promise<GatewayAnswer> {
  const parsed = responsesRequestSchema.safeParse(body);
  if (!parsed.success) {
    return {
      status: 400,
      json: openAIError(z.prettifyError(parsed.error), 'invalid_request_error', 'invalid_request'),
    };
  }
  const request = parsed.data;
  if (request.previous_response_id) {
    return {
      status: 400,
      json: openAIError(
        'previous_response_id is not supported: the gateway stores no responses; send the whole conversation in input',
        'invalid_request_error',
        'previous_response_not_found',
      ),
    };
  }
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
  const meta = responseMeta(request);
  const options = toResponsesCallOptions(request, signal);

  if (!request.stream) {
    try {
      return { status: 200, json: toResponseObject(meta, await model.doGenerate(options)) };
    } catch (error) {
      return modelErrorResponse(error);
    }
  }

  const opened = await openModelStream(model, options);
  if ('error' in opened) return modelErrorResponse(opened.error);
  return { status: 200, stream: sseFrames(streamParts(opened, signal), createResponseEventEncoder(meta)) };
}

function responseMeta(request: ResponsesRequest): ResponseMeta {
  return {
    id: itemId('resp'),
    created_at: Math.floor(Date.now() / 1000),
    model: request.model,
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    reasoning: { effort: request.reasoning?.effort ?? null, summary: null },
    temperature: request.temperature ?? null,
    tool_choice: request.tool_choice ?? 'auto',
    tools: servedTools(request),
    top_p: request.top_p ?? null,
    namespaces: namespacedNames(request),
  };
}

const terminalEvents = new Set(['response.completed', 'response.incomplete', 'response.failed']);

async function* sseFrames(
  parts: AsyncIterable<LanguageModelV4StreamPart>,
  encode: (part: LanguageModelV4StreamPart) => ResponseStreamEvent[],
): AsyncGenerator<string> {
  let ended = false;
  for await (const part of parts) {
    for (const event of encode(part)) {
      ended ||= terminalEvents.has(event.type);
      yield sseFrame(event, event.type);
    }
    if (ended) return;
  }
  // Clients wait for a terminal event: a model stream that stops without finishing has failed.
  if (!ended) {
    const error = new Error('the model stream ended before the answer finished');
    for (const event of encode({ type: 'error', error })) yield sseFrame(event, event.type);
  }
}
