import type { DraftEvent, SteeredMessage } from '@paddock/protocol';
import { newId } from '@paddock/protocol';
import type {
  AssistantModelMessage,
  JSONValue,
  ModelMessage,
  TextStreamPart,
  ToolModelMessage,
  ToolSet,
} from 'ai';
import { describeModelError, type TurnError } from './model-error.ts';

type AssistantPart = Exclude<AssistantModelMessage['content'], string>[number];
type ToolResultPart = Extract<ToolModelMessage['content'][number], { type: 'tool-result' }>;

/**
 * Follows one turn's AI SDK stream: turns each part into the normalized events of D6 and keeps
 * the messages the turn added, so that both survive a cancelled or failed turn intact.
 */
export function createTurnRecorder(emit: (event: DraftEvent) => void, model: string) {
  const messages: ModelMessage[] = [];
  /** The ids of the assistant messages among `messages`, in order: each step's `assistant.message` names its own. */
  const assistantIds: string[] = [];
  const openTools = new Map<string, string>();
  const openText = new Map<string, { kind: 'text' | 'reasoning'; text: string }>();
  let assistantParts: AssistantPart[] = [];
  let toolResults: ToolResultPart[] = [];
  let stepText = '';
  let lastAssistantText = '';
  let finishedSteps = 0;
  let lastFinishReason: string | undefined;
  let aborted = false;
  let error: TurnError | undefined;
  /** Steered messages the stream showed, and those the model was sent (the stream may not show one cut off). */
  const steeredSeen = new Set<string>();
  const steeredSent: SteeredMessage[] = [];

  function addSteered(id: string, content: string) {
    steeredSeen.add(id);
    messages.push({ role: 'user', content });
    emit({ type: 'user.message', data: { message_id: id, content, role: 'user' } });
  }

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
    assistantParts.push({ type: block.kind, text: block.text });
    if (block.kind === 'text') stepText += block.text;
  }

  function finishStep() {
    for (const id of [...openText.keys()]) closeBlock(id);
    const id = newId();
    if (stepText) {
      emit({ type: 'assistant.message', data: { message_id: id, content: stepText, model } });
      lastAssistantText = stepText;
    }
    if (assistantParts.length > 0) {
      messages.push({ role: 'assistant', content: assistantParts });
      assistantIds.push(id);
    }
    if (toolResults.length > 0) messages.push({ role: 'tool', content: toolResults });
    assistantParts = [];
    toolResults = [];
    stepText = '';
  }

  return {
    record(part: TextStreamPart<ToolSet>) {
      switch (part.type) {
        case 'text-start':
        case 'reasoning-start':
          openText.set(part.id, { kind: part.type === 'text-start' ? 'text' : 'reasoning', text: '' });
          break;
        case 'text-delta':
        case 'reasoning-delta': {
          if (!part.text) break;
          const kind = part.type === 'text-delta' ? 'text' : 'reasoning';
          const block = openText.get(part.id) ?? { kind, text: '' };
          block.text += part.text;
          openText.set(part.id, block);
          const content = [{ type: 'text' as const, content: part.text }];
          emit(
            kind === 'text'
              ? { type: 'assistant.message.chunk', data: { content } }
              : { type: 'reasoning.chunk', data: { content } },
          );
          break;
        }
        case 'text-end':
        case 'reasoning-end':
          closeBlock(part.id);
          break;
        case 'tool-call':
          openTools.set(part.toolCallId, part.toolName);
          assistantParts.push({
            type: 'tool-call',
            toolCallId: part.toolCallId,
            toolName: part.toolName,
            input: part.input,
          });
          emit({
            type: 'tool_call.start',
            tool_id: part.toolCallId,
            data: { tool_id: part.toolCallId, name: part.toolName, input: part.input },
          });
          break;
        case 'tool-result':
          if (part.preliminary) break;
          endTool(part.toolCallId, part.toolName, resultEnd(part.toolName, part.output));
          break;
        case 'tool-error':
          endTool(part.toolCallId, part.toolName, errorEnd(errorText(part.error)));
          break;
        case 'tool-output-denied':
          endTool(part.toolCallId, part.toolName, errorEnd('denied'));
          break;
        case 'steering-message': {
          // Joined the run before this step's model call: in the conversation it stands here.
          addSteered(part.id, messageContent(part.message));
          break;
        }
        case 'finish-step':
          finishedSteps += 1;
          lastFinishReason = part.finishReason;
          // No `usage` event: the gateway counts every model call to the thread (D16).
          finishStep();
          break;
        case 'error':
          error ??= describeModelError(part.error);
          break;
        case 'abort':
          aborted = true;
          break;
      }
    },

    /** A steered message was sent to the model: it belongs to the turn even if the stream is cut before showing it. */
    steered(id: string, content: string) {
      steeredSent.push({ id, content });
    },

    /** A failure outside the stream's own parts, e.g. the stream itself throwing. */
    fail(cause: unknown) {
      error ??= describeModelError(cause);
    },

    /**
     * Ends the turn: every started tool call gets its end, partial text becomes a message, and the
     * error, if any and not caused by cancelling, is reported.
     */
    close(cancelled: boolean) {
      aborted ||= cancelled;
      for (const [toolCallId, toolName] of [...openTools]) {
        endTool(toolCallId, toolName, errorEnd(aborted ? 'cancelled' : 'interrupted'));
      }
      finishStep();
      // The supervisor reports every message the turn took; each must be among the turn's messages.
      for (const { id, content } of steeredSent) if (!steeredSeen.has(id)) addSteered(id, content);
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

function errorEnd(message: string): ToolEnd {
  return { event: { status: 'error', error: message }, output: { type: 'error-text', value: message } };
}

function isShellResult(output: unknown): output is { exit_code: number; output: string } {
  return (
    output !== null &&
    typeof output === 'object' &&
    typeof (output as { exit_code?: unknown }).exit_code === 'number' &&
    typeof (output as { output?: unknown }).output === 'string'
  );
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function messageContent(message: { content: string | readonly { type: string; text?: string }[] }): string {
  if (typeof message.content === 'string') return message.content;
  return message.content.map((p) => (p.type === 'text' ? (p.text ?? '') : '')).join('');
}
