import { randomBytes } from 'node:crypto';
import type {
  LanguageModelV4FinishReason,
  LanguageModelV4GenerateResult,
  LanguageModelV4Usage,
} from '@ai-sdk/provider';
import type { NamespacedName } from './responses-request.ts';

export interface OutputText {
  type: 'output_text';
  text: string;
  annotations: never[];
  logprobs: never[];
}
export interface ReasoningText {
  type: 'reasoning_text';
  text: string;
}
type ItemStatus = 'in_progress' | 'completed' | 'incomplete';
export type OutputItem =
  | { type: 'message'; id: string; role: 'assistant'; status: ItemStatus; content: OutputText[] }
  | { type: 'reasoning'; id: string; status: ItemStatus; summary: never[]; content: ReasoningText[] }
  | {
      type: 'function_call';
      id: string;
      call_id: string;
      name: string;
      namespace?: string;
      arguments: string;
      status: ItemStatus;
    };

export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/** OpenAI's Response object, with the request's settings echoed as OpenAI does. */
export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  status: 'in_progress' | 'completed' | 'incomplete' | 'failed';
  background: false;
  error: { code: string; message: string } | null;
  incomplete_details: { reason: 'max_output_tokens' | 'content_filter' } | null;
  instructions: string | null;
  max_output_tokens: number | null;
  metadata: Record<string, never>;
  model: string;
  output: OutputItem[];
  parallel_tool_calls: boolean;
  previous_response_id: null;
  reasoning: { effort: string | null; summary: null };
  store: false;
  temperature: number | null;
  text: { format: { type: 'text' } };
  tool_choice: unknown;
  tools: unknown[];
  top_p: number | null;
  truncation: 'disabled';
  usage: ResponsesUsage | null;
}

/**
 * What the Response object echoes from the request, and the namespaced functions it offered (by
 * qualified name), whose calls are answered with their namespace and name.
 */
export type ResponseMeta = { namespaces: ReadonlyMap<string, NamespacedName> } & Pick<
  ResponseObject,
  | 'id'
  | 'created_at'
  | 'model'
  | 'instructions'
  | 'max_output_tokens'
  | 'parallel_tool_calls'
  | 'reasoning'
  | 'temperature'
  | 'tool_choice'
  | 'tools'
  | 'top_p'
>;

/** An id in OpenAI's style: its prefix, an underscore and random hex. */
export function itemId(prefix: 'resp' | 'msg' | 'fc' | 'rs'): string {
  return `${prefix}_${randomBytes(16).toString('hex')}`;
}

export function responseObject(
  meta: ResponseMeta,
  fields: Pick<ResponseObject, 'status' | 'output' | 'usage'> & Partial<ResponseObject>,
): ResponseObject {
  return {
    id: meta.id,
    object: 'response',
    created_at: meta.created_at,
    background: false,
    error: null,
    incomplete_details: null,
    instructions: meta.instructions,
    max_output_tokens: meta.max_output_tokens,
    metadata: {},
    model: meta.model,
    parallel_tool_calls: meta.parallel_tool_calls,
    previous_response_id: null,
    reasoning: meta.reasoning,
    store: false,
    temperature: meta.temperature,
    text: { format: { type: 'text' } },
    tool_choice: meta.tool_choice,
    tools: meta.tools,
    top_p: meta.top_p,
    truncation: 'disabled',
    ...fields,
  };
}

/** The status and reason a finished model call gives its response. */
export function finalStatus(
  reason: LanguageModelV4FinishReason,
): Pick<ResponseObject, 'status' | 'incomplete_details'> {
  if (reason.unified === 'length') {
    return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  }
  if (reason.unified === 'content-filter') {
    return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  }
  return { status: 'completed', incomplete_details: null };
}

/** Turns a non-streaming model result into a Response object. */
export function toResponseObject(meta: ResponseMeta, result: LanguageModelV4GenerateResult): ResponseObject {
  const output: OutputItem[] = [];
  for (const part of result.content) {
    const last = output.at(-1);
    if (part.type === 'text') {
      if (last?.type === 'message') last.content[0]!.text += part.text;
      else output.push(messageItem(itemId('msg'), 'completed', part.text));
    } else if (part.type === 'reasoning') {
      if (last?.type === 'reasoning') last.content[0]!.text += part.text;
      else output.push(reasoningItem(itemId('rs'), 'completed', part.text));
    } else if (part.type === 'tool-call' && !part.providerExecuted) {
      output.push({
        ...functionCallItem(part.toolCallId, part.toolName, meta.namespaces),
        arguments: part.input,
        status: 'completed',
      });
    }
  }
  return responseObject(meta, { ...finalStatus(result.finishReason), output, usage: toUsage(result.usage) });
}

export const outputText = (text: string): OutputText => ({
  type: 'output_text',
  text,
  annotations: [],
  logprobs: [],
});

export function messageItem(id: string, status: ItemStatus, text?: string): OutputItem {
  return {
    type: 'message',
    id,
    role: 'assistant',
    status,
    content: text === undefined ? [] : [outputText(text)],
  };
}

export function reasoningItem(id: string, status: ItemStatus, text?: string): OutputItem {
  return {
    type: 'reasoning',
    id,
    status,
    summary: [],
    content: text === undefined ? [] : [{ type: 'reasoning_text', text }],
  };
}

export function functionCallItem(
  callId: string,
  toolName: string,
  namespaces: ReadonlyMap<string, NamespacedName>,
): Extract<OutputItem, { type: 'function_call' }> {
  // A namespaced function is called by its name in its namespace, as OpenAI sends such calls.
  const namespaced = namespaces.get(toolName);
  return {
    type: 'function_call',
    id: itemId('fc'),
    call_id: callId,
    name: namespaced?.name ?? toolName,
    ...(namespaced && { namespace: namespaced.namespace }),
    arguments: '',
    status: 'in_progress',
  };
}

export function withText(item: OutputItem, text: string): OutputItem {
  if (item.type === 'message') return { ...item, content: [outputText(text)] };
  if (item.type === 'reasoning') return { ...item, content: [{ type: 'reasoning_text', text }] };
  return { ...item, arguments: text };
}

export function toUsage(usage: LanguageModelV4Usage): ResponsesUsage {
  const input = usage.inputTokens.total ?? 0;
  const output = usage.outputTokens.total ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: usage.inputTokens.cacheRead ?? 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: usage.outputTokens.reasoning ?? 0 },
    total_tokens: input + output,
  };
}
