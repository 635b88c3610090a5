import { randomBytes } from 'node:crypto';
import type {
  LanguageModelV4FinishReason,
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamPart,
  LanguageModelV4Usage,
} from '@ai-sdk/provider';
import { errorMessage } from '../model-error.ts';
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

function responseObject(
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
function finalStatus(
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

const outputText = (text: string): OutputText => ({
  type: 'output_text',
  text,
  annotations: [],
  logprobs: [],
});

function messageItem(id: string, status: ItemStatus, text?: string): OutputItem {
  return {
    type: 'message',
    id,
    role: 'assistant',
    status,
    content: text === undefined ? [] : [outputText(text)],
  };
}

function reasoningItem(id: string, status: ItemStatus, text?: string): OutputItem {
  return {
    type: 'reasoning',
    id,
    status,
    summary: [],
    content: text === undefined ? [] : [{ type: 'reasoning_text', text }],
  };
}

/** One streaming event: its `type` is also the SSE event name. */
export type ResponseStreamEvent = { type: string; sequence_number: number } & Record<string, unknown>;

/** An output item being streamed: where it is, and what it holds so far. */
interface OpenItem {
  index: number;
  item: OutputItem;
  /** Text, reasoning or arguments received so far. */
  text: string;
}

/**
 * Turns the model's stream parts into the Responses API's streaming events, in the order OpenAI
 * sends them: `response.created` and `response.in_progress` first; each output item added, its
 * content part added, its deltas, its text done, its part done and the item done; and last
 * `response.completed` (or `response.incomplete`) carrying the whole response and its usage, or
 * `response.failed` when the model call fails.
 */
export function createResponseEventEncoder(meta: ResponseMeta) {
  let sequence = 0;
  let started = false;
  // Every output item so far, at its output index; open ones by the part id that opened them.
  const items: OutputItem[] = [];
  const open = new Map<string, OpenItem>();

  const event = (type: string, fields: Record<string, unknown>): ResponseStreamEvent => ({
    type,
    sequence_number: sequence++,
    ...fields,
  });
  const copy = (item: OutputItem): OutputItem => structuredClone(item);

  function openItem(key: string, item: OutputItem, out: ResponseStreamEvent[]): OpenItem {
    const entry: OpenItem = { index: items.length, item, text: '' };
    items.push(item);
    open.set(key, entry);
    out.push(event('response.output_item.added', { output_index: entry.index, item: copy(item) }));
    if (item.type === 'message') {
      out.push(
        event('response.content_part.added', {
          item_id: item.id,
          output_index: entry.index,
          content_index: 0,
          part: outputText(''),
        }),
      );
    } else if (item.type === 'reasoning') {
      out.push(
        event('response.content_part.added', {
          item_id: item.id,
          output_index: entry.index,
          content_index: 0,
          part: { type: 'reasoning_text', text: '' },
        }),
      );
    }
    return entry;
  }

  function closeItem(key: string, out: ResponseStreamEvent[], finalArguments?: string): void {
    const entry = open.get(key);
    if (!entry) return;
    open.delete(key);
    const { item, index } = entry;
    const ids = { item_id: item.id, output_index: index };
    if (item.type === 'message') {
      const part = outputText(entry.text);
      out.push(
        event('response.output_text.done', { ...ids, content_index: 0, text: entry.text, logprobs: [] }),
      );
      out.push(event('response.content_part.done', { ...ids, content_index: 0, part }));
      item.content = [part];
    } else if (item.type === 'reasoning') {
      const part: ReasoningText = { type: 'reasoning_text', text: entry.text };
      out.push(event('response.reasoning_text.done', { ...ids, content_index: 0, text: entry.text }));
      out.push(event('response.content_part.done', { ...ids, content_index: 0, part }));
      item.content = [part];
    } else {
      item.arguments = finalArguments ?? entry.text;
      out.push(
        event('response.function_call_arguments.done', {
          ...ids,
          name: item.name,
          arguments: item.arguments,
        }),
      );
    }
    item.status = 'completed';
    out.push(event('response.output_item.done', { output_index: index, item: copy(item) }));
  }

  const closeAll = (out: ResponseStreamEvent[]) => {
    for (const key of [...open.keys()]) closeItem(key, out);
  };
  // At a failure, the items still open are reported as they stood.
  const snapshot = (): OutputItem[] => {
    const partial = new Map([...open.values()].map((e) => [e.index, withText(e.item, e.text)]));
    return items.map((item, index) => partial.get(index) ?? copy(item));
  };

  return function encode(part: LanguageModelV4StreamPart): ResponseStreamEvent[] {
    const out: ResponseStreamEvent[] = [];
    if (!started) {
      started = true;
      const initial = responseObject(meta, { status: 'in_progress', output: [], usage: null });
      out.push(event('response.created', { response: initial }));
      out.push(event('response.in_progress', { response: initial }));
    }
    switch (part.type) {
      case 'text-start':
        openItem(`text:${part.id}`, messageItem(itemId('msg'), 'in_progress'), out);
        break;
      case 'text-delta': {
        if (!part.delta) break;
        const entry =
          open.get(`text:${part.id}`) ??
          openItem(`text:${part.id}`, messageItem(itemId('msg'), 'in_progress'), out);
        entry.text += part.delta;
        out.push(
          event('response.output_text.delta', {
            item_id: entry.item.id,
            output_index: entry.index,
            content_index: 0,
            delta: part.delta,
            logprobs: [],
          }),
        );
        break;
      }
      case 'text-end':
        closeItem(`text:${part.id}`, out);
        break;
      case 'reasoning-start':
        openItem(`reasoning:${part.id}`, reasoningItem(itemId('rs'), 'in_progress'), out);
        break;
      case 'reasoning-delta': {
        if (!part.delta) break;
        const key = `reasoning:${part.id}`;
        const entry = open.get(key) ?? openItem(key, reasoningItem(itemId('rs'), 'in_progress'), out);
        entry.text += part.delta;
        out.push(
          event('response.reasoning_text.delta', {
            item_id: entry.item.id,
            output_index: entry.index,
            content_index: 0,
            delta: part.delta,
          }),
        );
        break;
      }
      case 'reasoning-end':
        closeItem(`reasoning:${part.id}`, out);
        break;
      case 'tool-input-start':
        if (part.providerExecuted) break;
        openItem(`tool:${part.id}`, functionCallItem(part.id, part.toolName, meta.namespaces), out);
        break;
      case 'tool-input-delta': {
        const entry = open.get(`tool:${part.id}`);
        if (!entry || !part.delta) break;
        entry.text += part.delta;
        out.push(
          event('response.function_call_arguments.delta', {
            item_id: entry.item.id,
            output_index: entry.index,
            delta: part.delta,
          }),
        );
        break;
      }
      case 'tool-call': {
        if (part.providerExecuted) break;
        const key = `tool:${part.toolCallId}`;
        // Providers that stream the input announced this call already; the rest send it whole here.
        if (!open.has(key)) {
          const entry = openItem(key, functionCallItem(part.toolCallId, part.toolName, meta.namespaces), out);
          out.push(
            event('response.function_call_arguments.delta', {
              item_id: entry.item.id,
              output_index: entry.index,
              delta: part.input,
            }),
          );
        }
        closeItem(key, out, part.input);
        break;
      }
      case 'finish': {
        closeAll(out);
        const status = finalStatus(part.finishReason);
        const response = responseObject(meta, { ...status, output: items, usage: toUsage(part.usage) });
        out.push(
          event(status.status === 'completed' ? 'response.completed' : 'response.incomplete', { response }),
        );
        break;
      }
      case 'error': {
        const response = responseObject(meta, {
          status: 'failed',
          error: { code: 'server_error', message: errorMessage(part.error) },
          output: snapshot(),
          usage: null,
        });
        out.push(event('response.failed', { response }));
        break;
      }
    }
    return out;
  };
}

function functionCallItem(
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

function withText(item: OutputItem, text: string): OutputItem {
  if (item.type === 'message') return { ...item, content: [outputText(text)] };
  if (item.type === 'reasoning') return { ...item, content: [{ type: 'reasoning_text', text }] };
  return { ...item, arguments: text };
}

function toUsage(usage: LanguageModelV4Usage): ResponsesUsage {
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
