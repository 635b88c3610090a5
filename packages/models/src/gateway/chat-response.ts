import type {
  LanguageModelV4FinishReason,
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamPart,
  LanguageModelV4Usage,
} from '@ai-sdk/provider';

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens: number };
  completion_tokens_details?: { reasoning_tokens: number };
}

export interface ChatToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function: { name?: string; arguments: string };
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: {
    index: 0;
    delta: {
      role?: 'assistant';
      content?: string;
      reasoning_content?: string;
      tool_calls?: ChatToolCallDelta[];
    };
    finish_reason: string | null;
  }[];
  usage?: ChatUsage;
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: {
    index: 0;
    message: {
      role: 'assistant';
      content: string | null;
      reasoning_content?: string;
      tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
    };
    finish_reason: string;
  }[];
  usage: ChatUsage;
}

export interface CompletionMeta {
  id: string;
  model: string;
  /** Unix seconds. */
  created: number;
}

/**
 * Turns the model's stream parts into `chat.completion.chunk` objects, in order: the role delta
 * first, then content and tool-call deltas, the finish reason, and the usage when asked for.
 */
export function createChunkEncoder(meta: CompletionMeta, includeUsage: boolean) {
  let roleSent = false;
  const toolIndexes = new Map<string, number>();
  const chunk = (
    delta: ChatCompletionChunk['choices'][0]['delta'],
    finishReason: string | null = null,
  ): ChatCompletionChunk => ({
    id: meta.id,
    object: 'chat.completion.chunk',
    created: meta.created,
    model: meta.model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  });
  const toolIndex = (id: string) => {
    if (!toolIndexes.has(id)) toolIndexes.set(id, toolIndexes.size);
    return toolIndexes.get(id)!;
  };

  return function encode(part: LanguageModelV4StreamPart): ChatCompletionChunk[] {
    const out: ChatCompletionChunk[] = [];
    if (!roleSent) {
      roleSent = true;
      out.push(chunk({ role: 'assistant', content: '' }));
    }
    switch (part.type) {
      case 'text-delta':
        if (part.delta) out.push(chunk({ content: part.delta }));
        break;
      case 'reasoning-delta':
        if (part.delta) out.push(chunk({ reasoning_content: part.delta }));
        break;
      case 'tool-input-start':
        if (part.providerExecuted) break;
        out.push(
          chunk({
            tool_calls: [
              {
                index: toolIndex(part.id),
                id: part.id,
                type: 'function',
                function: { name: part.toolName, arguments: '' },
              },
            ],
          }),
        );
        break;
      case 'tool-input-delta':
        if (toolIndexes.has(part.id) && part.delta) {
          out.push(
            chunk({ tool_calls: [{ index: toolIndex(part.id), function: { arguments: part.delta } }] }),
          );
        }
        break;
      case 'tool-call':
        // Providers that stream the input announced this call already; the rest send it whole here.
        if (part.providerExecuted || toolIndexes.has(part.toolCallId)) break;
        out.push(
          chunk({
            tool_calls: [
              {
                index: toolIndex(part.toolCallId),
                id: part.toolCallId,
                type: 'function',
                function: { name: part.toolName, arguments: part.input },
              },
            ],
          }),
        );
        break;
      case 'finish':
        out.push(chunk({}, toFinishReason(part.finishReason)));
        if (includeUsage) {
          out.push({
            id: meta.id,
            object: 'chat.completion.chunk',
            created: meta.created,
            model: meta.model,
            choices: [],
            usage: toChatUsage(part.usage),
          });
        }
        break;
    }
    return out;
  };
}

/** Turns a non-streaming model result into a `chat.completion` object. */
export function toChatCompletion(
  meta: CompletionMeta,
  result: LanguageModelV4GenerateResult,
): ChatCompletion {
  let text = '';
  let reasoning = '';
  const toolCalls: NonNullable<ChatCompletion['choices'][0]['message']['tool_calls']> = [];
  for (const part of result.content) {
    if (part.type === 'text') text += part.text;
    else if (part.type === 'reasoning') reasoning += part.text;
    else if (part.type === 'tool-call' && !part.providerExecuted) {
      toolCalls.push({
        id: part.toolCallId,
        type: 'function',
        function: { name: part.toolName, arguments: part.input },
      });
    }
  }
  return {
    id: meta.id,
    object: 'chat.completion',
    created: meta.created,
    model: meta.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: text || (toolCalls.length > 0 ? null : ''),
          ...(reasoning ? { reasoning_content: reasoning } : {}),
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        finish_reason: toFinishReason(result.finishReason),
      },
    ],
    usage: toChatUsage(result.usage),
  };
}

function toFinishReason(reason: LanguageModelV4FinishReason): string {
  switch (reason.unified) {
    case 'length':
      return 'length';
    case 'content-filter':
      return 'content_filter';
    case 'tool-calls':
      return 'tool_calls';
    default:
      return 'stop';
  }
}

function toChatUsage(usage: LanguageModelV4Usage): ChatUsage {
  const prompt = usage.inputTokens.total ?? 0;
  const completion = usage.outputTokens.total ?? 0;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    ...(usage.inputTokens.cacheRead
      ? { prompt_tokens_details: { cached_tokens: usage.inputTokens.cacheRead } }
      : {}),
    ...(usage.outputTokens.reasoning
      ? { completion_tokens_details: { reasoning_tokens: usage.outputTokens.reasoning } }
      : {}),
  };
}
