import type {
  LanguageModelV4CallOptions,
  LanguageModelV4FunctionTool,
  LanguageModelV4Message,
  LanguageModelV4Prompt,
  LanguageModelV4ToolChoice,
  LanguageModelV4ToolResultOutput,
  SharedV4FileData,
} from '@ai-sdk/provider';
import { z } from 'zod';
import { reasoningOf } from '../reasoning-effort.ts';

// Every object is loose: fields the gateway does not serve (`cache_control`, `citations`…) are ignored.
const textBlock = z.looseObject({ type: z.literal('text'), text: z.string() });
/**
 * Something of a type the gateway does not serve (a server tool's result block, a file by its
 * Files API id…): dropped. One of a type it serves but with a bad shape is refused.
 */
const ignored = (known: readonly string[]) =>
  z
    .looseObject({
      type: z.string().refine((type) => !known.includes(type), 'a known type with a bad shape'),
    })
    .transform(() => undefined);
const mediaSource = z.union([
  z.discriminatedUnion('type', [
    z.looseObject({ type: z.literal('base64'), media_type: z.string(), data: z.string() }),
    z.looseObject({ type: z.literal('url'), url: z.url() }),
    z.looseObject({ type: z.literal('text'), media_type: z.string().nullish(), data: z.string() }),
  ]),
  ignored(['base64', 'url', 'text']),
]);
const imageBlock = z.looseObject({ type: z.literal('image'), source: mediaSource });
const toolResultBlock = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string(),
  content: z
    .union([z.string(), z.array(z.union([textBlock, imageBlock, ignored(['text', 'image'])]))])
    .nullish(),
  is_error: z.boolean().nullish(),
});
const knownBlock = z.discriminatedUnion('type', [
  textBlock,
  imageBlock,
  z.looseObject({ type: z.literal('document'), source: mediaSource }),
  z.looseObject({ type: z.literal('tool_use'), id: z.string(), name: z.string(), input: z.unknown() }),
  toolResultBlock,
  z.looseObject({ type: z.literal('thinking'), thinking: z.string(), signature: z.string().nullish() }),
  z.looseObject({ type: z.literal('redacted_thinking'), data: z.string() }),
]);
const block = z.union([knownBlock, ignored(knownBlock.options.map((option) => option.shape.type.value))]);
type Block = z.infer<typeof knownBlock>;

const content = z.union([z.string(), z.array(block)]);
const systemText = z.union([z.string(), z.array(textBlock)]);
const message = z.discriminatedUnion('role', [
  z.object({ role: z.literal('user'), content }),
  z.object({ role: z.literal('assistant'), content }),
  // Claude Code puts system entries among the messages: system text at that point.
  z.object({ role: z.literal('system'), content: systemText }),
]);
type Message = z.infer<typeof message>;

const tool = z.looseObject({
  name: z.string().min(1),
  description: z.string().nullish(),
  input_schema: z.record(z.string(), z.unknown()).nullish(),
  /** Absent or `custom` for a client tool; Anthropic's server tools (`web_search_…`) are not served. */
  type: z.string().nullish(),
});
type Tool = z.infer<typeof tool>;

const toolChoice = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('auto') }),
  z.looseObject({ type: z.literal('any') }),
  z.looseObject({ type: z.literal('none') }),
  z.looseObject({ type: z.literal('tool'), name: z.string() }),
]);

/**
 * The subset of Anthropic's `POST /v1/messages` body the gateway serves; other fields (`metadata`,
 * `context_management`, `service_tier`…) are ignored. `max_tokens`, which Anthropic requires, is
 * taken when sent and not required. Also the body of `…/messages/count_tokens`.
 */
export const messagesRequestSchema = z.looseObject({
  model: z.string().min(1),
  messages: z.array(message).min(1),
  system: systemText.nullish(),
  tools: z.array(tool).nullish(),
  tool_choice: toolChoice.nullish(),
  stream: z.boolean().nullish(),
  max_tokens: z.number().int().positive().nullish(),
  temperature: z.number().nullish(),
  top_p: z.number().nullish(),
  top_k: z.number().int().nullish(),
  stop_sequences: z.array(z.string()).nullish(),
  thinking: z.looseObject({ type: z.string() }).nullish(),
  output_config: z.looseObject({ effort: z.string().nullish() }).nullish(),
});
export type MessagesRequest = z.infer<typeof messagesRequestSchema>;

/** Translates a parsed request into the call options every AI SDK model takes. */
export function toAnthropicCallOptions(
  request: MessagesRequest,
  abortSignal?: AbortSignal,
): LanguageModelV4CallOptions {
  const tools = request.tools?.filter(isClientTool).map(toFunctionTool);
  return {
    prompt: toPrompt(request),
    tools,
    toolChoice: request.tool_choice ? toToolChoice(request.tool_choice) : undefined,
    maxOutputTokens: request.max_tokens ?? undefined,
    temperature: request.temperature ?? undefined,
    topP: request.top_p ?? undefined,
    topK: request.top_k ?? undefined,
    stopSequences: request.stop_sequences ?? undefined,
    reasoning: reasoningOf(
      request.output_config?.effort ?? (request.thinking?.type === 'disabled' ? 'none' : undefined),
    ),
    abortSignal,
  };
}

function toPrompt(request: MessagesRequest): LanguageModelV4Prompt {
  const prompt: LanguageModelV4Prompt = [];
  if (request.system != null) {
    const system = textOf(request.system);
    if (system) prompt.push({ role: 'system', content: system });
  }
  // A tool_result block carries only the call's id; the AI SDK prompt also wants the tool's name.
  const toolNames = new Map<string, string>();
  for (const m of request.messages) {
    if (m.role === 'system') prompt.push({ role: 'system', content: textOf(m.content) });
    else if (m.role === 'assistant') {
      // An assistant message of dropped blocks only (a server tool's call) says nothing to a model.
      const assistant = toAssistantMessage(blocksOf(m), toolNames);
      if (assistant.content.length > 0) prompt.push(assistant);
    } else pushUserBlocks(prompt, blocksOf(m), toolNames);
  }
  return prompt;
}

function blocksOf(m: Exclude<Message, { role: 'system' }>): Block[] {
  if (typeof m.content === 'string') return [{ type: 'text', text: m.content }];
  return m.content.filter((b) => b !== undefined);
}

type UserPart = Extract<LanguageModelV4Message, { role: 'user' }>['content'][number];
type ToolResultPart = Extract<LanguageModelV4Message, { role: 'tool' }>['content'][number];

/**
 * A user message's tool results become tool messages and its other blocks user messages, in their
 * order, as the AI SDK prompt keeps them apart.
 */
function pushUserBlocks(
  prompt: LanguageModelV4Prompt,
  blocks: Block[],
  toolNames: Map<string, string>,
): void {
  for (const b of blocks) {
    const previous = prompt.at(-1);
    if (b.type === 'tool_result') {
      const part = toToolResult(b, toolNames);
      if (previous?.role === 'tool') previous.content.push(part);
      else prompt.push({ role: 'tool', content: [part] });
      continue;
    }
    const part = toUserPart(b);
    if (!part) continue;
    if (previous?.role === 'user') previous.content.push(part);
    else prompt.push({ role: 'user', content: [part] });
  }
}

function toUserPart(b: Block): UserPart | undefined {
  if (b.type === 'text') return { type: 'text', text: b.text };
  if (b.type !== 'image' && b.type !== 'document') return undefined;
  const file = fileOf(b.source, b.type);
  return file && { type: 'file', ...file };
}

function fileOf(
  source: z.infer<typeof mediaSource>,
  kind: 'image' | 'document',
): { data: SharedV4FileData; mediaType: string } | undefined {
  if (source === undefined) return undefined;
  if (source.type === 'base64')
    return { data: { type: 'data', data: source.data }, mediaType: source.media_type };
  if (source.type === 'text') {
    return { data: { type: 'text', text: source.data }, mediaType: source.media_type ?? 'text/plain' };
  }
  return {
    data: { type: 'url', url: new URL(source.url) },
    mediaType: kind === 'image' ? 'image' : 'application/pdf',
  };
}

function toToolResult(b: z.infer<typeof toolResultBlock>, toolNames: Map<string, string>): ToolResultPart {
  return {
    type: 'tool-result',
    toolCallId: b.tool_use_id,
    toolName: toolNames.get(b.tool_use_id) ?? 'unknown',
    output: toolOutput(b),
  };
}

function toolOutput(b: z.infer<typeof toolResultBlock>): LanguageModelV4ToolResultOutput {
  const blocks =
    typeof b.content === 'string'
      ? [{ type: 'text' as const, text: b.content }]
      : (b.content ?? []).filter((p) => p !== undefined);
  const text = blocks.map((p) => (p.type === 'text' ? p.text : '')).join('');
  if (b.is_error) return { type: 'error-text', value: text };
  if (!blocks.some((p) => p.type === 'image')) return { type: 'text', value: text };
  return {
    type: 'content',
    value: blocks.flatMap((p): Extract<LanguageModelV4ToolResultOutput, { type: 'content' }>['value'] => {
      if (p.type === 'text') return [{ type: 'text' as const, text: p.text }];
      const file = fileOf(p.source, 'image');
      return file ? [{ type: 'file' as const, ...file }] : [];
    }),
  };
}

type AssistantMessage = Extract<LanguageModelV4Message, { role: 'assistant' }>;

function toAssistantMessage(blocks: Block[], toolNames: Map<string, string>): AssistantMessage {
  const parts: AssistantMessage['content'] = [];
  for (const b of blocks) {
    if (b.type === 'text') {
      if (b.text) parts.push({ type: 'text', text: b.text });
    } else if (b.type === 'tool_use') {
      toolNames.set(b.id, b.name);
      parts.push({ type: 'tool-call', toolCallId: b.id, toolName: b.name, input: b.input ?? {} });
    } else if (b.type === 'thinking') {
      // The signature goes back to an Anthropic model as it came (the AI SDK's own option for it).
      parts.push({
        type: 'reasoning',
        text: b.thinking,
        ...(b.signature ? { providerOptions: { anthropic: { signature: b.signature } } } : {}),
      });
    } else if (b.type === 'redacted_thinking') {
      parts.push({ type: 'reasoning', text: '', providerOptions: { anthropic: { redactedData: b.data } } });
    }
  }
  return { role: 'assistant', content: parts };
}

function textOf(value: string | { text: string }[]): string {
  return typeof value === 'string' ? value : value.map((p) => p.text).join('\n');
}

function isClientTool(t: Tool): boolean {
  return t.type == null || t.type === 'custom';
}

function toFunctionTool(t: Tool): LanguageModelV4FunctionTool {
  return {
    type: 'function',
    name: t.name,
    description: t.description ?? undefined,
    inputSchema: (t.input_schema ?? {
      type: 'object',
      properties: {},
    }) as LanguageModelV4FunctionTool['inputSchema'],
  };
}

function toToolChoice(choice: z.infer<typeof toolChoice>): LanguageModelV4ToolChoice {
  if (choice.type === 'any') return { type: 'required' };
  if (choice.type === 'tool') return { type: 'tool', toolName: choice.name };
  return { type: choice.type };
}
