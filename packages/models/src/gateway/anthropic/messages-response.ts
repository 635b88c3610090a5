import type {
  LanguageModelV4FinishReason,
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamPart,
  LanguageModelV4Usage,
  SharedV4ProviderMetadata,
} from '@ai-sdk/provider';
import { parseArguments } from '../tool-arguments.ts';

export type AnthropicContentBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown };

export type AnthropicStopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'refusal';

export interface AnthropicUsage {
  /** Input tokens not read from or written to the prompt cache, as Anthropic counts them. */
  input_tokens: number;
  output_tokens: number;
  /**
   * Always sent, 0 without a cache, as Anthropic does: claude-agent-acp adds all four counts, and a
   * missing one made its `usage_update` a NaN that ACP clients refuse.
   */
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

export interface AnthropicMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: AnthropicContentBlock[];
  stop_reason: AnthropicStopReason | null;
  stop_sequence: string | null;
  usage: AnthropicUsage;
}

type BlockDelta =
  | { type: 'text_delta'; text: string }
  | { type: 'thinking_delta'; thinking: string }
  | { type: 'signature_delta'; signature: string }
  | { type: 'input_json_delta'; partial_json: string };

/** A streaming event; each is sent as `event: <type>` with itself as the data. */
export type AnthropicStreamEvent =
  | { type: 'message_start'; message: AnthropicMessage }
  | { type: 'content_block_start'; index: number; content_block: AnthropicContentBlock }
  | { type: 'content_block_delta'; index: number; delta: BlockDelta }
  | { type: 'content_block_stop'; index: number }
  | {
      type: 'message_delta';
      delta: { stop_reason: AnthropicStopReason; stop_sequence: string | null };
      usage: AnthropicUsage;
    }
  | { type: 'message_stop' };

export interface MessageMeta {
  /** `msg_…`. */
  id: string;
  model: string;
}

/**
 * Turns the model's stream parts into Anthropic's events, in order: `message_start`, then each
 * content block's start, deltas and stop, then `message_delta` (stop reason and usage) and
 * `message_stop`. The usage is known only at the end: `message_start` says 0 input tokens and
 * `message_delta` carries the whole usage.
 */
export function createMessageEventEncoder(meta: MessageMeta) {
  let started = false;
  let blockCount = 0;
  /** Open blocks by the part id they stand for (`text:…`, `reasoning:…`, `tool:…`). */
  const open = new Map<string, number>();
  /** Tool calls whose input was streamed: their closing `tool-call` part adds nothing. */
  const streamedCalls = new Set<string>();

  const start = (key: string, block: AnthropicContentBlock): AnthropicStreamEvent => {
    const index = blockCount++;
    open.set(key, index);
    return { type: 'content_block_start', index, content_block: block };
  };
  const stop = (key: string): AnthropicStreamEvent[] => {
    const index = open.get(key);
    if (index === undefined) return [];
    open.delete(key);
    return [{ type: 'content_block_stop', index }];
  };
  /** The delta for an open block, opening it first when its start part never came. */
  const delta = (key: string, opening: AnthropicContentBlock, d: BlockDelta): AnthropicStreamEvent[] => {
    const out = open.has(key) ? [] : [start(key, opening)];
    out.push({ type: 'content_block_delta', index: open.get(key)!, delta: d });
    return out;
  };
  const thinking = (): AnthropicContentBlock => ({ type: 'thinking', thinking: '', signature: '' });

  return function encode(part: LanguageModelV4StreamPart): AnthropicStreamEvent[] {
    const out: AnthropicStreamEvent[] = [];
    if (!started) {
      started = true;
      out.push({ type: 'message_start', message: emptyMessage(meta) });
    }
    switch (part.type) {
      // Text and thinking blocks open at their first delta, so that none is sent empty.
      case 'text-delta':
        if (part.delta) {
          out.push(
            ...delta(`text:${part.id}`, { type: 'text', text: '' }, { type: 'text_delta', text: part.delta }),
          );
        }
        break;
      case 'text-end':
        out.push(...stop(`text:${part.id}`));
        break;
      case 'reasoning-start': {
        const redacted = anthropicMetadata(part.providerMetadata, 'redactedData');
        if (redacted) out.push(start(`reasoning:${part.id}`, { type: 'redacted_thinking', data: redacted }));
        break;
      }
      case 'reasoning-delta': {
        const key = `reasoning:${part.id}`;
        if (part.delta) out.push(...delta(key, thinking(), { type: 'thinking_delta', thinking: part.delta }));
        const signature = anthropicMetadata(part.providerMetadata, 'signature');
        if (signature) out.push(...delta(key, thinking(), { type: 'signature_delta', signature }));
        break;
      }
      case 'reasoning-end':
        out.push(...stop(`reasoning:${part.id}`));
        break;
      case 'tool-input-start':
        if (part.providerExecuted) break;
        streamedCalls.add(part.id);
        out.push(start(`tool:${part.id}`, { type: 'tool_use', id: part.id, name: part.toolName, input: {} }));
        break;
      case 'tool-input-delta':
        if (open.has(`tool:${part.id}`) && part.delta) {
          out.push({
            type: 'content_block_delta',
            index: open.get(`tool:${part.id}`)!,
            delta: { type: 'input_json_delta', partial_json: part.delta },
          });
        }
        break;
      case 'tool-input-end':
        out.push(...stop(`tool:${part.id}`));
        break;
      case 'tool-call': {
        const key = `tool:${part.toolCallId}`;
        if (part.providerExecuted) break;
        // Providers that stream the input announced this call already; the rest send it whole here.
        if (streamedCalls.has(part.toolCallId)) {
          out.push(...stop(key));
          break;
        }
        out.push(start(key, { type: 'tool_use', id: part.toolCallId, name: part.toolName, input: {} }));
        out.push({
          type: 'content_block_delta',
          index: open.get(key)!,
          delta: { type: 'input_json_delta', partial_json: part.input },
        });
        out.push(...stop(key));
        break;
      }
      case 'finish':
        for (const key of [...open.keys()]) out.push(...stop(key));
        out.push({
          type: 'message_delta',
          delta: {
            stop_reason: toStopReason(part.finishReason),
            stop_sequence: anthropicMetadata(part.providerMetadata, 'stopSequence') ?? null,
          },
          usage: toAnthropicUsage(part.usage),
        });
        out.push({ type: 'message_stop' });
        break;
    }
    return out;
  };
}

/** Turns a non-streaming model result into Anthropic's message. */
export function toAnthropicMessage(
  meta: MessageMeta,
  result: LanguageModelV4GenerateResult,
): AnthropicMessage {
  const content: AnthropicContentBlock[] = [];
  for (const part of result.content) {
    // No empty text block: Anthropic sends none, and refuses one sent back.
    if (part.type === 'text') {
      if (part.text) content.push({ type: 'text', text: part.text });
    } else if (part.type === 'reasoning') {
      const redacted = anthropicMetadata(part.providerMetadata, 'redactedData');
      content.push(
        redacted
          ? { type: 'redacted_thinking', data: redacted }
          : {
              type: 'thinking',
              thinking: part.text,
              signature: anthropicMetadata(part.providerMetadata, 'signature') ?? '',
            },
      );
    } else if (part.type === 'tool-call' && !part.providerExecuted) {
      content.push({
        type: 'tool_use',
        id: part.toolCallId,
        name: part.toolName,
        input: parseArguments(part.input),
      });
    }
  }
  return {
    ...emptyMessage(meta),
    content,
    stop_reason: toStopReason(result.finishReason),
    stop_sequence: anthropicMetadata(result.providerMetadata, 'stopSequence') ?? null,
    usage: toAnthropicUsage(result.usage),
  };
}

function emptyMessage(meta: MessageMeta): AnthropicMessage {
  return {
    id: meta.id,
    type: 'message',
    role: 'assistant',
    model: meta.model,
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
  };
}

function toStopReason(reason: LanguageModelV4FinishReason): AnthropicStopReason {
  switch (reason.unified) {
    case 'length':
      return 'max_tokens';
    case 'tool-calls':
      return 'tool_use';
    case 'content-filter':
      return 'refusal';
    default:
      return reason.raw === 'stop_sequence' ? 'stop_sequence' : 'end_turn';
  }
}

function toAnthropicUsage(usage: LanguageModelV4Usage): AnthropicUsage {
  const cacheRead = usage.inputTokens.cacheRead ?? 0;
  const cacheWrite = usage.inputTokens.cacheWrite ?? 0;
  const total = usage.inputTokens.total ?? 0;
  return {
    input_tokens: usage.inputTokens.noCache ?? Math.max(0, total - cacheRead - cacheWrite),
    output_tokens: usage.outputTokens.total ?? 0,
    cache_read_input_tokens: cacheRead,
    cache_creation_input_tokens: cacheWrite,
  };
}

/** A string the AI SDK's Anthropic provider left in a part's metadata (a signature, a stop sequence). */
function anthropicMetadata(metadata: SharedV4ProviderMetadata | undefined, key: string): string | undefined {
  const value = metadata?.anthropic?.[key];
  return typeof value === 'string' ? value : undefined;
}
