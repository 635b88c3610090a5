import type {
  LanguageModelV4FinishReason,
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamPart,
  LanguageModelV4Usage,
} from '@ai-sdk/provider';
import { parseArguments } from '../tool-arguments.ts';

export interface GeminiPart {
  text?: string;
  thought?: boolean;
  functionCall?: { id: string; name: string; args: Record<string, unknown> };
}

export interface GeminiUsage {
  promptTokenCount: number;
  candidatesTokenCount: number;
  totalTokenCount: number;
  thoughtsTokenCount?: number;
  cachedContentTokenCount?: number;
}

/** A `GenerateContentResponse`: a whole answer, or one chunk of a streamed one. */
export interface GeminiResponse {
  candidates: {
    content?: { role: 'model'; parts: GeminiPart[] };
    finishReason?: string;
    index: 0;
  }[];
  usageMetadata?: GeminiUsage;
  modelVersion: string;
  responseId: string;
}

export interface GeminiResponseMeta {
  /** The model id as the client asked for it. */
  model: string;
  responseId: string;
}

/** Turns a non-streaming model result into a `GenerateContentResponse`. */
export function toGeminiResponse(
  meta: GeminiResponseMeta,
  result: LanguageModelV4GenerateResult,
): GeminiResponse {
  const parts: GeminiPart[] = [];
  for (const part of result.content) {
    const previous = parts.at(-1);
    if (part.type === 'text' || part.type === 'reasoning') {
      const thought = part.type === 'reasoning';
      // Consecutive pieces of the same kind read as one part.
      if (previous?.text !== undefined && (previous.thought === true) === thought) previous.text += part.text;
      else parts.push(thought ? { text: part.text, thought } : { text: part.text });
    } else if (part.type === 'tool-call' && !part.providerExecuted) {
      parts.push(functionCallPart(part.toolCallId, part.toolName, part.input));
    }
  }
  return {
    candidates: [
      {
        content: { role: 'model', parts },
        finishReason: toFinishReason(result.finishReason),
        index: 0,
      },
    ],
    usageMetadata: toGeminiUsage(result.usage),
    modelVersion: meta.model,
    responseId: meta.responseId,
  };
}

/**
 * Turns the model's stream parts into streamed `GenerateContentResponse` chunks: one per text or
 * thought delta, one per function call (whole), and a last one with only the finish reason and
 * the usage.
 */
export function createGeminiChunkEncoder(meta: GeminiResponseMeta) {
  const chunk = (candidate: GeminiResponse['candidates'][0], usage?: GeminiUsage): GeminiResponse => ({
    candidates: [candidate],
    ...(usage ? { usageMetadata: usage } : {}),
    modelVersion: meta.model,
    responseId: meta.responseId,
  });
  const withParts = (parts: GeminiPart[]) => chunk({ content: { role: 'model', parts }, index: 0 });

  return function encode(part: LanguageModelV4StreamPart): GeminiResponse[] {
    switch (part.type) {
      case 'text-delta':
        return part.delta ? [withParts([{ text: part.delta }])] : [];
      case 'reasoning-delta':
        return part.delta ? [withParts([{ text: part.delta, thought: true }])] : [];
      case 'tool-call':
        // Gemini sends a call whole: the streamed input (tool-input-*) is not forwarded.
        if (part.providerExecuted) return [];
        return [withParts([functionCallPart(part.toolCallId, part.toolName, part.input)])];
      case 'finish':
        return [
          chunk({ finishReason: toFinishReason(part.finishReason), index: 0 }, toGeminiUsage(part.usage)),
        ];
      default:
        return [];
    }
  };
}

/** Gemini's `args` is an object: arguments that are not a JSON object are sent as `{}`. */
function functionCallPart(id: string, name: string, input: string): GeminiPart {
  const args = parseArguments(input);
  const isObject = args !== null && typeof args === 'object' && !Array.isArray(args);
  return { functionCall: { id, name, args: isObject ? (args as Record<string, unknown>) : {} } };
}

/** Gemini ends a turn that calls functions with `STOP` too. */
function toFinishReason(reason: LanguageModelV4FinishReason): string {
  switch (reason.unified) {
    case 'length':
      return 'MAX_TOKENS';
    case 'content-filter':
      return 'SAFETY';
    case 'stop':
    case 'tool-calls':
      return 'STOP';
    default:
      return 'OTHER';
  }
}

/** Gemini counts thoughts apart from the candidates' tokens; the total is both plus the prompt. */
function toGeminiUsage(usage: LanguageModelV4Usage): GeminiUsage {
  const prompt = usage.inputTokens.total ?? 0;
  const output = usage.outputTokens.total ?? 0;
  const thoughts = usage.outputTokens.reasoning ?? 0;
  return {
    promptTokenCount: prompt,
    candidatesTokenCount: Math.max(0, output - thoughts),
    totalTokenCount: prompt + output,
    ...(thoughts ? { thoughtsTokenCount: thoughts } : {}),
    ...(usage.inputTokens.cacheRead ? { cachedContentTokenCount: usage.inputTokens.cacheRead } : {}),
  };
}
