import {
  getErrorMessage,
  type LanguageModelV4StreamPart,
  type SharedV4ProviderMetadata,
} from '@ai-sdk/provider';
import type { DraftEvent } from '@paddock/protocol';
import { newId } from '@paddock/protocol';
import type { AssistantModelMessage, JSONValue, ModelMessage, ToolModelMessage } from 'ai';
import { describeModelError, type TurnError } from './model-error.ts';
import type { ToolOutcome } from './model-tools.ts';

type AssistantPart = Exclude<AssistantModelMessage['content'], string>[number];
type ToolResultPart = Extract<ToolModelMessage['content'][number], { type: 'tool-result' }>;

interface OpenBlock {
  kind: 'text' | 'reasoning';
  text: string;
  providerMetadata?: SharedV4ProviderMetadata;
}

/**
 * Follows one turn of the model loop: turns the model's stream parts and the tools' outcomes into
 * the normalized events of D6, and keeps the messages the turn added (each step's assistant message
 * and tool results, and the messages steered into it), so that both survive a cancelled or failed
 * turn intact.
 */
export function createTurnRecorder(emit: (event: DraftEvent) => void, model: string) {
  const messages: ModelMessage[] = [];
  /** The ids of the assistant messages among `messages`, in order: each step's `assistant.message` names its own. */
  const assistantIds: string[] = [];
  const openTools = new Map<string, string>();
  const openText = new Map<string, OpenBlock>();
  let assistantParts: AssistantPart[] = [];
  let toolResults: ToolResultPart[] = [];
  let stepText = '';
  let lastAssistantText = '';
  let finishedSteps = 0;
  let stepFinishReason: string | undefined;
  let lastFinishReason: string | undefined;
  let error: TurnError | undefined;

  function endTool(toolCallId: string, toolName: string, end: ToolEnd) {
    if (!openTools.delete(toolCallId)) return;
    emit({ type: 'tool_call.end', tool_id: toolCallId, data: { tool_id: toolCallId, ...end.event } });
    toolResults.push({ type: 'tool-result', toolCallId, toolName, output: end.output });
  }

  function closeBlock(id: string) {
    const block = openText.get(id);
    if (!block) return;
    openText.delete(id);
    if (!block.text) return;
    const providerOptions = block.providerMetadata;
    assistantParts.push({
      type: block.kind,
      text: block.text,
      ...(providerOptions ? { providerOptions } : {}),
    });
    if (block.kind === 'text') stepText += block.text;
  }

  /** Ends the step: its text becomes an `assistant.message`; answers the messages it added. */
  function finishStep(): ModelMessage[] {
    for (const id of [...openText.keys()]) closeBlock(id);
    const added: ModelMessage[] = [];
    const id = newId();
    if (stepText) {
      emit({ type: 'assistant.message', data: { message_id: id, content: stepText, model } });
      lastAssistantText = stepText;
    }
    if (assistantParts.length > 0) {
      added.push({ role: 'assistant', content: assistantParts });
      assistantIds.push(id);
    }
    if (toolResults.length > 0) added.push({ role: 'tool', content: toolResults });
    messages.push(...added);
    assistantParts = [];
    toolResults = [];
    stepText = '';
    return added;
  }

  return {
    /** A part of the model's stream; tool calls come through `toolCall`. */
    record(part: LanguageModelV4StreamPart) {
      switch (part.type) {
        case 'text-start':
        case 'reasoning-start':
          openText.set(part.id, {
            kind: part.type === 'text-start' ? 'text' : 'reasoning',
            text: '',
            providerMetadata: part.providerMetadata,
          });
          break;
        case 'text-delta':
        case 'reasoning-delta': {
          const kind = part.type === 'text-delta' ? 'text' : 'reasoning';
          const block = openText.get(part.id) ?? { kind, text: '' };
          openText.set(part.id, block);
          if (part.providerMetadata) block.providerMetadata = part.providerMetadata;
          if (!part.delta) break;
          block.text += part.delta;
          const content = [{ type: 'text' as const, content: part.delta }];
          emit(
            kind === 'text'
              ? { type: 'assistant.message.chunk', data: { content } }
              : { type: 'reasoning.chunk', data: { content } },
          );
          break;
        }
        case 'text-end':
        case 'reasoning-end': {
          const block = openText.get(part.id);
          if (block && part.providerMetadata) block.providerMetadata = part.providerMetadata;
          closeBlock(part.id);
          break;
        }
        case 'finish':
          stepFinishReason = part.finishReason.unified;
          break;
        case 'error':
          error ??= describeModelError(part.error);
          break;
      }
    },

    /** The model called a tool (its input parsed, or not): the call's start. */
    toolCall(call: {
      toolCallId: string;
      toolName: string;
      input: unknown;
      providerMetadata?: SharedV4ProviderMetadata;
    }) {
      openTools.set(call.toolCallId, call.toolName);
      assistantParts.push({
        type: 'tool-call',
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        input: call.input,
        ...(call.providerMetadata ? { providerOptions: call.providerMetadata } : {}),
      });
      emit({
        type: 'tool_call.start',
        tool_id: call.toolCallId,
        data: { tool_id: call.toolCallId, name: call.toolName, input: call.input },
      });
    },

    /** A tool call's outcome: the call's end, and its result for the model. */
    toolDone(toolCallId: string, toolName: string, outcome: ToolOutcome) {
      if (outcome.ok) endTool(toolCallId, toolName, resultEnd(toolName, outcome.output));
      else endTool(toolCallId, toolName, errorEnd(errorText(outcome.error), getErrorMessage(outcome.error)));
    },

    /** A message steered into the turn joins it here, before the next model call. */
    steered(id: string, content: string) {
      messages.push({ role: 'user', content });
      emit({ type: 'user.message', data: { message_id: id, content, role: 'user' } });
    },

    /** A model call ended, and the tools it called: answers the step's messages and why the model stopped. */
    finishStep(): { added: ModelMessage[]; finishReason: string | undefined } {
      finishedSteps += 1;
      lastFinishReason = stepFinishReason;
      stepFinishReason = undefined;
      return { added: finishStep(), finishReason: lastFinishReason };
    },

    /** A failure outside the stream's own parts, e.g. the model call itself failing. */
    fail(cause: unknown) {
      error ??= describeModelError(cause);
    },

    get failed(): boolean {
      return error !== undefined;
    },

    /**
     * Ends the turn: every started tool call gets its end, partial text becomes a message, and the
     * error, if any and not caused by cancelling, is reported.
     */
    close(aborted: boolean) {
      for (const [toolCallId, toolName] of [...openTools]) {
        endTool(toolCallId, toolName, errorEnd(aborted ? 'cancelled' : 'interrupted'));
      }
      finishStep();
      if (error && !aborted) emit({ type: 'error', data: error });
      return {
        messages,
        assistantIds,
        lastAssistantText,
        finishedSteps,
        lastFinishReason,
        aborted,
        error: aborted ? undefined : error,
      };
    },
  };
}

export type TurnRecorder = ReturnType<typeof createTurnRecorder>;

interface ToolEnd {
  event: Omit<Extract<DraftEvent, { type: 'tool_call.end' }>['data'], 'tool_id'>;
  output: ToolResultPart['output'];
}

function resultEnd(toolName: string, output: unknown): ToolEnd {
  const modelOutput: ToolResultPart['output'] =
    typeof output === 'string'
      ? { type: 'text', value: output }
      : { type: 'json', value: (output ?? null) as JSONValue };
  if (toolName === 'shell' && isShellResult(output)) {
    return {
      event: { status: 'ok', output: output.output, exit_code: output.exit_code },
      output: modelOutput,
    };
  }
  const text = typeof output === 'string' ? output : JSON.stringify(output ?? null);
  return { event: { status: 'ok', output: text }, output: modelOutput };
}

/** A failed call: the event says why, the model gets the error as the AI SDK words it (`Error: …`). */
function errorEnd(message: string, forModel = message): ToolEnd {
  return { event: { status: 'error', error: message }, output: { type: 'error-text', value: forModel } };
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function isShellResult(output: unknown): output is { exit_code: number; output: string } {
  return (
    output !== null &&
    typeof output === 'object' &&
    typeof (output as { exit_code?: unknown }).exit_code === 'number' &&
    typeof (output as { output?: unknown }).output === 'string'
  );
}
