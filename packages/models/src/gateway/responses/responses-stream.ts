import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { errorMessage } from '../model-error.ts';
import {
  finalStatus,
  functionCallItem,
  itemId,
  messageItem,
  type OutputItem,
  outputText,
  type ReasoningText,
  type ResponseMeta,
  reasoningItem,
  responseObject,
  toUsage,
  withText,
} from './responses-response.ts';

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
