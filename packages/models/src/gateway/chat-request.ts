import type {
  LanguageModelV4CallOptions,
  LanguageModelV4FunctionTool,
  LanguageModelV4Message,
  LanguageModelV4Prompt,
  LanguageModelV4ToolChoice,
} from '@ai-sdk/provider';
import { z } from 'zod';
import { parseArguments, reasoningOf } from './request-parts.ts';

const textPart = z.object({ type: z.literal('text'), text: z.string() });
const content = z.union([z.string(), z.array(textPart)]);

const toolCall = z.object({
  id: z.string(),
  type: z.literal('function').optional(),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

const message = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content }),
  z.object({ role: z.literal('developer'), content }),
  z.object({ role: z.literal('user'), content }),
  z.object({
    role: z.literal('assistant'),
    content: content.nullish(),
    tool_calls: z.array(toolCall).nullish(),
    reasoning_content: z.string().nullish(),
  }),
  z.object({ role: z.literal('tool'), tool_call_id: z.string(), content }),
]);

const functionTool = z.object({
  type: z.literal('function'),
  function: z.object({
    name: z.string().min(1),
    description: z.string().nullish(),
    parameters: z.record(z.string(), z.unknown()).nullish(),
    strict: z.boolean().nullish(),
  }),
});

const toolChoice = z.union([
  z.enum(['none', 'auto', 'required']),
  z.object({ type: z.literal('function'), function: z.object({ name: z.string() }) }),
]);

/** The subset of OpenAI's `POST /chat/completions` body the gateway serves; other fields are ignored. */
export const chatRequestSchema = z.looseObject({
  model: z.string().min(1),
  messages: z.array(message).min(1),
  tools: z.array(functionTool).nullish(),
  tool_choice: toolChoice.nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().nullish() }).nullish(),
  max_tokens: z.number().int().positive().nullish(),
  max_completion_tokens: z.number().int().positive().nullish(),
  temperature: z.number().nullish(),
  top_p: z.number().nullish(),
  // A value the AI SDK does not know is ignored, as fields the gateway does not serve are.
  reasoning_effort: z.string().nullish(),
  frequency_penalty: z.number().nullish(),
  presence_penalty: z.number().nullish(),
  seed: z.number().int().nullish(),
  stop: z.union([z.string(), z.array(z.string())]).nullish(),
});
export type ChatRequest = z.infer<typeof chatRequestSchema>;
type ChatMessage = z.infer<typeof message>;

/** Translates a parsed request into the call options every AI SDK model takes. */
export function toCallOptions(request: ChatRequest, abortSignal?: AbortSignal): LanguageModelV4CallOptions {
  return {
    prompt: toPrompt(request.messages),
    tools: request.tools?.map(toFunctionTool),
    toolChoice: request.tool_choice ? toToolChoice(request.tool_choice) : undefined,
    maxOutputTokens: request.max_completion_tokens ?? request.max_tokens ?? undefined,
    temperature: request.temperature ?? undefined,
    topP: request.top_p ?? undefined,
    reasoning: reasoningOf(request.reasoning_effort),
    frequencyPenalty: request.frequency_penalty ?? undefined,
    presencePenalty: request.presence_penalty ?? undefined,
    seed: request.seed ?? undefined,
    stopSequences: typeof request.stop === 'string' ? [request.stop] : (request.stop ?? undefined),
    abortSignal,
  };
}

function toPrompt(messages: ChatMessage[]): LanguageModelV4Prompt {
  const prompt: LanguageModelV4Prompt = [];
  // OpenAI tool messages carry only the call id; the AI SDK prompt also wants the tool name.
  const toolNames = new Map<string, string>();
  for (const m of messages) {
    if (m.role === 'system' || m.role === 'developer') {
      prompt.push({ role: 'system', content: textOf(m.content) });
    } else if (m.role === 'user') {
      const parts = typeof m.content === 'string' ? [{ type: 'text' as const, text: m.content }] : m.content;
      prompt.push({ role: 'user', content: parts.map((p) => ({ type: 'text', text: p.text })) });
    } else if (m.role === 'assistant') {
      prompt.push(toAssistantMessage(m, toolNames));
    } else {
      const part = {
        type: 'tool-result' as const,
        toolCallId: m.tool_call_id,
        toolName: toolNames.get(m.tool_call_id) ?? 'unknown',
        output: { type: 'text' as const, value: textOf(m.content) },
      };
      const previous = prompt.at(-1);
      // Consecutive OpenAI tool messages answer one assistant turn: keep them in one tool message.
      if (previous?.role === 'tool') previous.content.push(part);
      else prompt.push({ role: 'tool', content: [part] });
    }
  }
  return prompt;
}

function toAssistantMessage(
  m: Extract<ChatMessage, { role: 'assistant' }>,
  toolNames: Map<string, string>,
): LanguageModelV4Message {
  const parts: Extract<LanguageModelV4Message, { role: 'assistant' }>['content'] = [];
  if (m.reasoning_content) parts.push({ type: 'reasoning', text: m.reasoning_content });
  const text = m.content == null ? '' : textOf(m.content);
  if (text) parts.push({ type: 'text', text });
  for (const call of m.tool_calls ?? []) {
    toolNames.set(call.id, call.function.name);
    parts.push({
      type: 'tool-call',
      toolCallId: call.id,
      toolName: call.function.name,
      input: parseArguments(call.function.arguments),
    });
  }
  return { role: 'assistant', content: parts };
}

function textOf(value: string | { text: string }[]): string {
  return typeof value === 'string' ? value : value.map((p) => p.text).join('');
}

function toFunctionTool(t: z.infer<typeof functionTool>): LanguageModelV4FunctionTool {
  return {
    type: 'function',
    name: t.function.name,
    description: t.function.description ?? undefined,
    inputSchema: (t.function.parameters ?? {
      type: 'object',
      properties: {},
    }) as LanguageModelV4FunctionTool['inputSchema'],
    strict: t.function.strict ?? undefined,
  };
}

function toToolChoice(choice: z.infer<typeof toolChoice>): LanguageModelV4ToolChoice {
  if (typeof choice === 'string') return { type: choice };
  return { type: 'tool', toolName: choice.function.name };
}
