import {
  APICallError,
  type LanguageModelV4,
  type LanguageModelV4CallOptions,
  type LanguageModelV4Content,
  type LanguageModelV4FinishReason,
  type LanguageModelV4GenerateResult,
  type LanguageModelV4StreamPart,
  type LanguageModelV4StreamResult,
  type LanguageModelV4ToolCall,
  type LanguageModelV4Usage,
} from '@ai-sdk/provider';
import { abortableSleep, abortError } from './scripted/abortable-sleep.ts';
import {
  answeredToolCalls,
  newestUserText,
  promptCharacters,
  textBeforeNewestUser,
} from './scripted/prompt-reading.ts';
import { quoteToolResults } from './scripted/quote-tool-results.ts';
import { parseScript } from './scripted/script.ts';

interface Answer {
  text: string;
  toolCalls: LanguageModelV4ToolCall[];
  finishReason: LanguageModelV4FinishReason;
  usage: LanguageModelV4Usage;
}

let toolCallCount = 0;

/**
 * The offline, deterministic `scripted` model (D8): it follows `::` directives in the newest
 * user message, so tests and the no-provider default can drive any harness without a network.
 */
export function createScriptedModel(): LanguageModelV4 {
  return {
    specificationVersion: 'v4',
    provider: 'paddock',
    modelId: 'scripted',
    supportedUrls: {},
    async doGenerate(options): Promise<LanguageModelV4GenerateResult> {
      const answer = await answerPrompt(options);
      const content: LanguageModelV4Content[] = [];
      if (answer.text) content.push({ type: 'text', text: answer.text });
      content.push(...answer.toolCalls);
      return { content, finishReason: answer.finishReason, usage: answer.usage, warnings: [] };
    },
    async doStream(options): Promise<LanguageModelV4StreamResult> {
      const parts = streamParts(await answerPrompt(options));
      return {
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        }),
      };
    },
  };
}

async function answerPrompt(options: LanguageModelV4CallOptions): Promise<Answer> {
  const { prompt, abortSignal } = options;
  if (abortSignal?.aborted) throw abortError(abortSignal);
  const inputChars = promptCharacters(prompt);
  if (prompt.at(-1)?.role === 'tool') {
    return answerWith(quoteToolResults(answeredToolCalls(prompt)), [], inputChars);
  }
  const script = parseScript(newestUserText(prompt), {
    earlier: textBeforeNewestUser(prompt),
    offered:
      options.tools?.map((offered) =>
        offered.type === 'function'
          ? { name: offered.name, description: offered.description, inputSchema: offered.inputSchema }
          : { name: offered.name },
      ) ?? [],
  });
  if (script.sleepMs > 0) await abortableSleep(script.sleepMs, abortSignal);
  if (script.error) {
    throw new APICallError({
      message: script.error,
      url: 'paddock:scripted',
      requestBodyValues: {},
      isRetryable: false,
    });
  }
  const toolCalls = script.toolCalls.map(
    (call): LanguageModelV4ToolCall => ({
      type: 'tool-call',
      toolCallId: nextToolCallId(),
      toolName: call.toolName,
      input: JSON.stringify(call.input),
    }),
  );
  const lines = [script.text ? `You said: ${script.text}` : '', ...script.replies];
  if (script.reportOptions) lines.push(`options: ${callSettings(options)}`);
  let text = lines.filter(Boolean).join('\n');
  if (!text && toolCalls.length === 0) text = 'You said nothing.';
  return answerWith(text, toolCalls, inputChars);
}

/** The call's sampling and reasoning settings, as JSON with the names a task input's `model_options` uses. */
function callSettings(options: LanguageModelV4CallOptions): string {
  return JSON.stringify({
    temperature: options.temperature,
    top_p: options.topP,
    max_output_tokens: options.maxOutputTokens,
    reasoning_effort: options.reasoning,
  });
}

function answerWith(text: string, toolCalls: LanguageModelV4ToolCall[], inputChars: number): Answer {
  const outputChars = text.length + toolCalls.reduce((sum, call) => sum + call.input.length, 0);
  const inputTokens = Math.ceil(inputChars / 4);
  const outputTokens = Math.ceil(outputChars / 4);
  return {
    text,
    toolCalls,
    finishReason:
      toolCalls.length > 0 ? { unified: 'tool-calls', raw: 'tool_calls' } : { unified: 'stop', raw: 'stop' },
    usage: {
      inputTokens: { total: inputTokens, noCache: inputTokens, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: outputTokens, text: outputTokens, reasoning: 0 },
    },
  };
}

function streamParts(answer: Answer): LanguageModelV4StreamPart[] {
  const parts: LanguageModelV4StreamPart[] = [{ type: 'stream-start', warnings: [] }];
  if (answer.text) {
    const id = 'txt-0';
    parts.push({ type: 'text-start', id });
    // One word a chunk, each keeping its trailing whitespace, so the chunks concatenate back exactly.
    for (const word of answer.text.match(/\S+\s*|\s+/g) ?? [])
      parts.push({ type: 'text-delta', id, delta: word });
    parts.push({ type: 'text-end', id });
  }
  for (const call of answer.toolCalls) {
    parts.push({ type: 'tool-input-start', id: call.toolCallId, toolName: call.toolName });
    parts.push({ type: 'tool-input-delta', id: call.toolCallId, delta: call.input });
    parts.push({ type: 'tool-input-end', id: call.toolCallId });
    parts.push(call);
  }
  parts.push({ type: 'finish', finishReason: answer.finishReason, usage: answer.usage });
  return parts;
}

function nextToolCallId(): string {
  toolCallCount += 1;
  return `call_${toolCallCount}_${Math.random().toString(36).slice(2, 10)}`;
}
