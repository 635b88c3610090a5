import type {
  JSONValue,
  LanguageModelV4CallOptions,
  LanguageModelV4Message,
  LanguageModelV4Prompt,
} from '@ai-sdk/provider';
import { z } from 'zod';
import { responseFormatOf, toolsOf } from './gemini-tools.ts';

const jsonObject = z.record(z.string(), z.unknown());

const part = z.looseObject({
  text: z.string().nullish(),
  thought: z.boolean().nullish(),
  functionCall: z
    .looseObject({ id: z.string().nullish(), name: z.string().min(1), args: jsonObject.nullish() })
    .nullish(),
  functionResponse: z
    .looseObject({ id: z.string().nullish(), name: z.string().min(1), response: jsonObject.nullish() })
    .nullish(),
});
type Part = z.infer<typeof part>;

const content = z.looseObject({ role: z.string().nullish(), parts: z.array(part).nullish() });

const functionDeclaration = z.looseObject({
  name: z.string().min(1),
  description: z.string().nullish(),
  parameters: jsonObject.nullish(),
  parametersJsonSchema: jsonObject.nullish(),
});

/** The subset of Gemini's `generateContent` body the gateway serves; other fields are ignored. */
export const geminiRequestSchema = z.looseObject({
  contents: z.array(content).min(1),
  systemInstruction: z.union([z.string(), content]).nullish(),
  // Tools other than function declarations (search, code execution) are ignored.
  tools: z.array(z.looseObject({ functionDeclarations: z.array(functionDeclaration).nullish() })).nullish(),
  toolConfig: z
    .looseObject({
      functionCallingConfig: z
        .looseObject({ mode: z.string().nullish(), allowedFunctionNames: z.array(z.string()).nullish() })
        .nullish(),
    })
    .nullish(),
  // `thinkingConfig`, `candidateCount`, `responseModalities` and the rest are ignored.
  generationConfig: z
    .looseObject({
      responseMimeType: z.string().nullish(),
      responseSchema: jsonObject.nullish(),
      responseJsonSchema: jsonObject.nullish(),
      temperature: z.number().nullish(),
      topP: z.number().nullish(),
      topK: z.number().int().nullish(),
      maxOutputTokens: z.number().int().positive().nullish(),
      stopSequences: z.array(z.string()).nullish(),
      presencePenalty: z.number().nullish(),
      frequencyPenalty: z.number().nullish(),
      seed: z.number().int().nullish(),
    })
    .nullish(),
});
export type GeminiRequest = z.infer<typeof geminiRequestSchema>;

/** Translates a parsed Gemini request into the call options every AI SDK model takes. */
export function toGeminiCallOptions(
  request: GeminiRequest,
  abortSignal?: AbortSignal,
): LanguageModelV4CallOptions {
  const config = request.generationConfig;
  return {
    prompt: toPrompt(request),
    ...toolsOf(request),
    maxOutputTokens: config?.maxOutputTokens ?? undefined,
    temperature: config?.temperature ?? undefined,
    topP: config?.topP ?? undefined,
    topK: config?.topK ?? undefined,
    stopSequences: config?.stopSequences ?? undefined,
    presencePenalty: config?.presencePenalty ?? undefined,
    frequencyPenalty: config?.frequencyPenalty ?? undefined,
    seed: config?.seed ?? undefined,
    responseFormat: responseFormatOf(config),
    abortSignal,
  };
}

function toPrompt(request: GeminiRequest): LanguageModelV4Prompt {
  const prompt: LanguageModelV4Prompt = [];
  const system = request.systemInstruction;
  const systemText = typeof system === 'string' ? system : textOf(system?.parts ?? []);
  if (systemText) prompt.push({ role: 'system', content: systemText });
  const calls = callIds();
  for (const { role, parts } of request.contents) {
    if (role === 'model') {
      const message = toAssistantMessage(parts ?? [], calls);
      if (message.content.length > 0) prompt.push(message);
    } else {
      pushUserParts(prompt, parts ?? [], calls);
    }
  }
  return prompt;
}

/**
 * Gemini may leave a call's id out: each call gets one, and each function response is matched to
 * its call by id when it has one, else to the oldest unanswered call of the same name. A second
 * response to a call already answered is left out (`undefined`): gemini-cli resumes a session
 * (`--resume`) with each function response twice, which a provider that pairs every tool call
 * with one result refuses.
 */
function callIds() {
  const open: { id: string; name: string }[] = [];
  const answered = new Set<string>();
  let made = 0;
  const newId = () => `gemini-call-${++made}`;
  return {
    call(name: string, id: string | null | undefined): string {
      const callId = id || newId();
      open.push({ id: callId, name });
      return callId;
    },
    answer(name: string, id: string | null | undefined): string | undefined {
      const index = open.findIndex((call) => (id ? call.id === id : call.name === name));
      if (index === -1) return id && answered.has(id) ? undefined : id || newId();
      const callId = open.splice(index, 1)[0]!.id;
      answered.add(callId);
      return callId;
    },
  };
}

function toAssistantMessage(parts: Part[], calls: ReturnType<typeof callIds>) {
  const message: Extract<LanguageModelV4Message, { role: 'assistant' }> = { role: 'assistant', content: [] };
  for (const p of parts) {
    if (p.functionCall) {
      message.content.push({
        type: 'tool-call',
        toolCallId: calls.call(p.functionCall.name, p.functionCall.id),
        toolName: p.functionCall.name,
        input: p.functionCall.args ?? {},
      });
    } else if (p.text) {
      message.content.push({ type: p.thought ? 'reasoning' : 'text', text: p.text });
    }
  }
  return message;
}

/**
 * A user turn's function responses become one tool message, its text a user message after it, each
 * text part a part of its own: gemini-cli sends its `<session_context>` and the prompt as two parts
 * of one turn, which must not run into one line.
 */
function pushUserParts(prompt: LanguageModelV4Prompt, parts: Part[], calls: ReturnType<typeof callIds>) {
  for (const p of parts) {
    if (!p.functionResponse) continue;
    const { name, id, response } = p.functionResponse;
    const toolCallId = calls.answer(name, id);
    if (toolCallId === undefined) continue;
    const result = {
      type: 'tool-result' as const,
      toolCallId,
      toolName: name,
      output: { type: 'json' as const, value: (response ?? {}) as JSONValue },
    };
    const previous = prompt.at(-1);
    if (previous?.role === 'tool') previous.content.push(result);
    else prompt.push({ role: 'tool', content: [result] });
  }
  const texts = parts.flatMap((p) => (p.text && !p.thought ? [{ type: 'text' as const, text: p.text }] : []));
  if (texts.length > 0) prompt.push({ role: 'user', content: texts });
}

function textOf(parts: Part[]): string {
  return parts
    .filter((p) => !p.thought)
    .map((p) => p.text ?? '')
    .join('');
}
