import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4StreamResult,
} from '@ai-sdk/provider';
import { APICallError, type ToolSet } from 'ai';
import { callTool, parseToolInput } from './model-tools.ts';
import type { TurnRecorder } from './turn-recorder.ts';

/** A failed call the provider says may succeed again is tried this many more times, after 2 s, then 4 s. */
const retries = 2;
const firstRetryDelayMs = 2_000;

/**
 * One step of the loop: a model call, its stream recorded as it comes, and every tool it calls run
 * as its call arrives (in the sandbox, through the tools), all of them awaited. Answers how many
 * tool calls the step made. A failed call or stream rejects; the step's partial output is recorded.
 */
export async function runModelStep(
  model: LanguageModelV4,
  call: LanguageModelV4CallOptions & { abortSignal: AbortSignal },
  tools: ToolSet,
  recorder: TurnRecorder,
): Promise<{ toolCalls: number }> {
  const { stream } = await withRetries(() => model.doStream(call), call.abortSignal);
  const running: Promise<void>[] = [];
  const reader = stream.getReader();
  try {
    for (;;) {
      const { value: part, done } = await reader.read();
      if (done) break;
      if (part.type !== 'tool-call') {
        recorder.record(part);
        continue;
      }
      if (part.providerExecuted) continue;
      const { toolCallId, toolName } = part;
      const input = parseToolInput(toolName, part.input);
      recorder.toolCall({
        toolCallId,
        toolName,
        input: input.ok ? input.value : part.input,
        providerMetadata: part.providerMetadata,
      });
      const outcome = input.ok
        ? callTool(tools, { toolCallId, toolName, input: input.value }, call.abortSignal)
        : Promise.resolve({
            ok: false as const,
            error: `Invalid input for tool ${toolName}: ${input.error}`,
          });
      // A call cut off by a Stop ends as cancelled when the turn closes, whatever the tool then says.
      running.push(
        outcome.then((settled) => {
          if (!call.abortSignal.aborted) recorder.toolDone(toolCallId, toolName, settled);
        }),
      );
    }
  } finally {
    reader.releaseLock();
  }
  await Promise.all(running);
  return { toolCalls: running.length };
}

async function withRetries(
  start: () => PromiseLike<LanguageModelV4StreamResult>,
  signal: AbortSignal,
): Promise<LanguageModelV4StreamResult> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await start();
    } catch (error) {
      if (signal.aborted || attempt >= retries || !APICallError.isInstance(error) || !error.isRetryable)
        throw error;
      await delay(firstRetryDelayMs * 2 ** attempt, signal);
    }
  }
}

function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', abort);
      resolve();
    }, ms);
    const abort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', abort, { once: true });
  });
}
