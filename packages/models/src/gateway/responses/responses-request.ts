import type {
  LanguageModelV4CallOptions,
  LanguageModelV4FunctionTool,
  LanguageModelV4Message,
  LanguageModelV4Prompt,
  LanguageModelV4ToolChoice,
} from '@ai-sdk/provider';
import { z } from 'zod';
import { reasoningOf } from '../reasoning-effort.ts';
import { parseArguments } from '../tool-arguments.ts';

// Parts of every kind a message or a tool output carries: text is read, a user's images too; other
// parts (files, audio) are skipped.
const contentPart = z.looseObject({
  type: z.string(),
  text: z.string().optional(),
  image_url: z.string().nullish(),
});
const content = z.union([z.string(), z.array(contentPart)]);

const messageItem = z.looseObject({
  type: z.literal('message').optional(),
  role: z.enum(['user', 'assistant', 'system', 'developer']),
  content,
});
const functionCallItem = z.looseObject({
  type: z.literal('function_call'),
  call_id: z.string().min(1),
  name: z.string().min(1),
  // Set on a call of a tool inside a namespace tool.
  namespace: z.string().nullish(),
  arguments: z.string(),
});
const functionCallOutputItem = z.looseObject({
  type: z.literal('function_call_output'),
  call_id: z.string().min(1),
  output: content,
});
const reasoningItem = z.looseObject({
  type: z.literal('reasoning'),
  summary: z.array(contentPart).nullish(),
  content: z.array(contentPart).nullish(),
});
const servedItemTypes = new Set(['message', 'function_call', 'function_call_output', 'reasoning']);
// Items of any other type (built-in tool calls, item references) are ignored.
const otherItem = z
  .looseObject({ type: z.string().refine((type) => !servedItemTypes.has(type)) })
  .transform(() => null);
const item = z.union([messageItem, functionCallItem, functionCallOutputItem, reasoningItem, otherItem]);
type Item = NonNullable<z.infer<typeof item>>;

const functionTool = z.looseObject({
  type: z.literal('function'),
  name: z.string().min(1),
  description: z.string().nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
  strict: z.boolean().nullish(),
});
// Tools of other types (web search, custom, built-ins) are not offered to the model.
const notFunction = z.string().refine((type) => type !== 'function');
const notServed = z.string().refine((type) => type !== 'function' && type !== 'namespace');
const otherTool = z.looseObject({ type: notServed }).transform(() => null);
// A group of tools the model calls by namespace and name, as Codex sends its MCP servers' tools
// (`mcp__<server>`) and its sub-agent tools.
const namespaceTool = z.looseObject({
  type: z.literal('namespace'),
  name: z.string().min(1),
  tools: z.array(z.union([functionTool, otherTool])),
});
const tool = z.union([functionTool, namespaceTool, otherTool]);

const toolChoice = z.union([
  z.enum(['none', 'auto', 'required']),
  z.looseObject({ type: z.literal('function'), name: z.string() }),
  // Other choices (built-in tools, allowed_tools) leave the choice to the model.
  z.looseObject({ type: notFunction }).transform(() => null),
]);

/**
 * The subset of OpenAI's `POST /responses` body the gateway serves. Other fields (`store`,
 * `include`, `prompt_cache_key`, `client_metadata`, `parallel_tool_calls`, `text`, …) are ignored.
 */
export const responsesRequestSchema = z.looseObject({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(item)]),
  instructions: z.string().nullish(),
  tools: z.array(tool).nullish(),
  tool_choice: toolChoice.nullish(),
  stream: z.boolean().nullish(),
  max_output_tokens: z.number().int().positive().nullish(),
  temperature: z.number().nullish(),
  top_p: z.number().nullish(),
  // A value the AI SDK does not know is ignored, as fields the gateway does not serve are.
  reasoning: z.looseObject({ effort: z.string().nullish() }).nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  previous_response_id: z.string().nullish(),
});
export type ResponsesRequest = z.infer<typeof responsesRequestSchema>;
type FunctionTool = z.infer<typeof functionTool>;

/** Where a function tool inside a namespace tool lives: the namespace and its name there. */
export interface NamespacedName {
  namespace: string;
  name: string;
}

/**
 * The name the model knows a namespaced function by: `<namespace>__<name>`, so Codex's MCP tool
 * `shout` in `mcp__demo` is `mcp__demo__shout`, the name MCP tools have in Claude Code and in Codex
 * before namespaces.
 */
export function qualifiedName(namespace: string, name: string): string {
  return `${namespace}__${name}`;
}

/** The request's tools as echoed in the response: its function and namespace tools. */
export function servedTools(request: ResponsesRequest): unknown[] {
  return (request.tools ?? []).filter((t) => t !== null);
}

/**
 * The function tools offered to the model: the request's own and those inside its namespace tools,
 * named by `qualifiedName`; tools of other types are not served.
 */
export function functionTools(request: ResponsesRequest): FunctionTool[] {
  return (request.tools ?? []).flatMap((t): FunctionTool[] => {
    if (t === null) return [];
    if (t.type === 'function') return [t];
    return t.tools.flatMap((inner) => (inner ? [{ ...inner, name: qualifiedName(t.name, inner.name) }] : []));
  });
}

/** Each namespaced function's qualified name, and where it lives, to answer its calls with. */
export function namespacedNames(request: ResponsesRequest): Map<string, NamespacedName> {
  const names = new Map<string, NamespacedName>();
  for (const t of request.tools ?? []) {
    if (t?.type !== 'namespace') continue;
    for (const inner of t.tools) {
      if (inner) names.set(qualifiedName(t.name, inner.name), { namespace: t.name, name: inner.name });
    }
  }
  return names;
}

/** Translates a parsed request into the call options every AI SDK model takes. */
export function toResponsesCallOptions(
  request: ResponsesRequest,
  abortSignal?: AbortSignal,
): LanguageModelV4CallOptions {
  const tools = functionTools(request);
  return {
    prompt: toPrompt(request),
    tools: tools.length > 0 ? tools.map(toFunctionTool) : undefined,
    toolChoice: toToolChoice(request.tool_choice),
    maxOutputTokens: request.max_output_tokens ?? undefined,
    temperature: request.temperature ?? undefined,
    topP: request.top_p ?? undefined,
    reasoning: reasoningOf(request.reasoning?.effort),
    abortSignal,
  };
}

type AssistantContent = Extract<LanguageModelV4Message, { role: 'assistant' }>['content'];
type ToolContent = Extract<LanguageModelV4Message, { role: 'tool' }>['content'];

function toPrompt(request: ResponsesRequest): LanguageModelV4Prompt {
  const prompt: LanguageModelV4Prompt = [];
  if (request.instructions) prompt.push({ role: 'system', content: request.instructions });
  const items: Item[] =
    typeof request.input === 'string'
      ? [{ role: 'user', content: request.input }]
      : request.input.filter((entry) => entry !== null);
  // Output items carry only the call id; the AI SDK prompt also wants the tool name.
  const toolNames = new Map<string, string>();
  // Consecutive assistant items (reasoning, text, calls) are one assistant turn, as are the
  // consecutive outputs answering it.
  const assistantContent = (): AssistantContent => {
    const last = prompt.at(-1);
    if (last?.role === 'assistant') return last.content;
    const next: AssistantContent = [];
    prompt.push({ role: 'assistant', content: next });
    return next;
  };
  const toolContent = (): ToolContent => {
    const last = prompt.at(-1);
    if (last?.role === 'tool') return last.content;
    const next: ToolContent = [];
    prompt.push({ role: 'tool', content: next });
    return next;
  };
  for (const entry of items) {
    if (entry.type === 'function_call') {
      const toolName = entry.namespace ? qualifiedName(entry.namespace, entry.name) : entry.name;
      toolNames.set(entry.call_id, toolName);
      assistantContent().push({
        type: 'tool-call',
        toolCallId: entry.call_id,
        toolName,
        input: parseArguments(entry.arguments),
      });
    } else if (entry.type === 'function_call_output') {
      toolContent().push({
        type: 'tool-result',
        toolCallId: entry.call_id,
        toolName: toolNames.get(entry.call_id) ?? 'unknown',
        output: { type: 'text', value: textOf(entry.output) },
      });
    } else if (entry.type === 'reasoning') {
      const text = textOf(entry.content?.length ? entry.content : (entry.summary ?? []));
      if (text) assistantContent().push({ type: 'reasoning', text });
    } else {
      const text = textOf(entry.content);
      if (entry.role === 'system' || entry.role === 'developer')
        prompt.push({ role: 'system', content: text });
      else if (entry.role === 'user') prompt.push({ role: 'user', content: userContent(entry.content) });
      else if (text) assistantContent().push({ type: 'text', text });
    }
  }
  return prompt;
}

type UserContent = Extract<LanguageModelV4Message, { role: 'user' }>['content'];

function userContent(value: z.infer<typeof content>): UserContent {
  if (typeof value === 'string') return [{ type: 'text', text: value }];
  return value.flatMap((part): UserContent => {
    if (part.text !== undefined) return [{ type: 'text', text: part.text }];
    if (part.type === 'input_image' && part.image_url) return imagePart(part.image_url);
    return [];
  });
}

// An image as a data URL (what Codex sends) or a link; one that is neither is skipped.
function imagePart(imageUrl: string): UserContent {
  const inline = /^data:([^;,]+);base64,(.*)$/s.exec(imageUrl);
  if (inline) return [{ type: 'file', mediaType: inline[1]!, data: { type: 'data', data: inline[2]! } }];
  if (!URL.canParse(imageUrl)) return [];
  return [{ type: 'file', mediaType: 'image', data: { type: 'url', url: new URL(imageUrl) } }];
}

function textOf(value: z.infer<typeof content>): string {
  if (typeof value === 'string') return value;
  return value.map((p) => p.text ?? '').join('');
}

function toFunctionTool(t: FunctionTool): LanguageModelV4FunctionTool {
  return {
    type: 'function',
    name: t.name,
    description: t.description ?? undefined,
    inputSchema: (t.parameters ?? {
      type: 'object',
      properties: {},
    }) as LanguageModelV4FunctionTool['inputSchema'],
    strict: t.strict ?? undefined,
  };
}

function toToolChoice(choice: ResponsesRequest['tool_choice']): LanguageModelV4ToolChoice | undefined {
  if (!choice) return undefined;
  if (typeof choice === 'string') return { type: choice };
  return { type: 'tool', toolName: choice.name };
}
