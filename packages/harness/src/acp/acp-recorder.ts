import type { SessionUpdate, ToolCallContent, ToolCallUpdate } from '@agentclientprotocol/sdk';
import type { DraftEvent } from '@paddock/protocol';
import { newId } from '@paddock/protocol';
import type { ModelMessage } from 'ai';

/**
 * Follows one prompt's `session/update`s: turns each into the normalized events of D6 and keeps the
 * assistant messages the turn added. A message ends where a tool call starts and where the turn ends.
 */
export function createAcpRecorder(emit: (event: DraftEvent) => void, model: string) {
  const messages: ModelMessage[] = [];
  const assistantIds: string[] = [];
  /** Tool calls started and not ended: their names, for an end the agent never sends. */
  const openTools = new Map<string, string>();
  const endedTools = new Set<string>();
  /** The last output an open call's updates carried: its end keeps it when the end carries none. */
  const toolOutputs = new Map<string, string>();
  let text = '';
  let lastAssistantText = '';

  function flushText() {
    if (!text) return;
    const id = newId();
    emit({ type: 'assistant.message', data: { message_id: id, content: text, model } });
    messages.push({ role: 'assistant', content: [{ type: 'text', text }] });
    assistantIds.push(id);
    lastAssistantText = text;
    text = '';
  }

  /** Tool calls announced without their input yet (Claude Code sends it in an update): held until it comes. */
  const announced = new Map<string, ToolCallUpdate>();

  function startTool(update: ToolCallUpdate) {
    const id = update.toolCallId;
    if (openTools.has(id) || endedTools.has(id)) return;
    const call = { ...announced.get(id), ...withoutNulls(update) } as ToolCallUpdate;
    if (isEmpty(call.rawInput) && (call.status ?? 'pending') === 'pending') {
      announced.set(id, call);
      return;
    }
    announced.delete(id);
    flushText();
    const name = call.name || call.title || call.kind || 'tool';
    openTools.set(id, name);
    emit({ type: 'tool_call.start', tool_id: id, data: { tool_id: id, name, input: call.rawInput ?? {} } });
  }

  function endTool(
    toolId: string,
    end: Omit<Extract<DraftEvent, { type: 'tool_call.end' }>['data'], 'tool_id'>,
  ) {
    if (!openTools.delete(toolId)) return;
    toolOutputs.delete(toolId);
    endedTools.add(toolId);
    emit({ type: 'tool_call.end', tool_id: toolId, data: { tool_id: toolId, ...end } });
  }

  function toolUpdate(call: ToolCallUpdate) {
    startTool(call);
    if (!openTools.has(call.toolCallId)) return;
    // What this update says, else what an earlier one said, else its raw output as JSON.
    const said = toolText(call);
    if (said) toolOutputs.set(call.toolCallId, said);
    const carried = said || rawJson(call.rawOutput);
    const output = said || toolOutputs.get(call.toolCallId) || rawJson(call.rawOutput) || said;
    if (call.status === 'completed') {
      const exitCode = exitCodeOf(call.rawOutput);
      endTool(call.toolCallId, {
        status: exitCode !== undefined && exitCode !== 0 ? 'error' : 'ok',
        output: output ?? '',
        ...(exitCode !== undefined ? { exit_code: exitCode } : {}),
      });
    } else if (call.status === 'failed') {
      endTool(call.toolCallId, { status: 'error', error: output || 'failed' });
    } else if (carried) {
      emit({
        type: 'tool_call.update',
        tool_id: call.toolCallId,
        data: { tool_id: call.toolCallId, output: carried },
      });
    }
  }

  return {
    update(update: SessionUpdate) {
      switch (update.sessionUpdate) {
        case 'agent_message_chunk':
          if (update.content.type !== 'text' || !update.content.text) break;
          text += update.content.text;
          emit({
            type: 'assistant.message.chunk',
            data: { content: [{ type: 'text', content: update.content.text }] },
          });
          break;
        case 'agent_thought_chunk':
          if (update.content.type !== 'text' || !update.content.text) break;
          emit({
            type: 'reasoning.chunk',
            data: { content: [{ type: 'text', content: update.content.text }] },
          });
          break;
        case 'tool_call':
        case 'tool_call_update':
          toolUpdate(update);
          break;
        case 'plan':
          emit({ type: 'plan.update', data: { entries: update.entries } });
          break;
        // The gateway counts usage (D16); modes, commands and titles are the program's own business.
        default:
          break;
      }
    },

    /** Ends the turn: a tool call left open gets its end, and the last text becomes a message. */
    close(cancelled: boolean) {
      for (const call of [...announced.values()]) startTool({ ...call, status: 'in_progress' });
      for (const toolId of [...openTools.keys()])
        endTool(toolId, { status: 'error', error: cancelled ? 'cancelled' : 'interrupted' });
      flushText();
      return { messages, assistantIds, lastAssistantText };
    },
  };
}

function isEmpty(input: unknown): boolean {
  return (
    input === undefined || input === null || (typeof input === 'object' && Object.keys(input).length === 0)
  );
}

/** An update's fields that say something: ACP sends `null` for "unchanged". */
function withoutNulls(update: ToolCallUpdate): Partial<ToolCallUpdate> {
  return Object.fromEntries(
    Object.entries(update).filter(([, value]) => value !== null && value !== undefined),
  );
}

/**
 * A tool call's output as text: its content blocks, else its raw output's text (the first of its
 * known text fields that says something: a program may leave one empty and fill another).
 */
function toolText(call: ToolCallUpdate): string | undefined {
  const parts = (call.content ?? []).map(contentText).filter((part): part is string => Boolean(part));
  if (parts.length > 0) return parts.join('\n');
  const raw = call.rawOutput;
  if (typeof raw === 'string') return raw;
  const texts = textFields(raw);
  return texts.length > 0 ? (texts.find((text) => text !== '') ?? '') : undefined;
}

/** A raw output with no text of its own (an MCP result, say), as JSON. */
function rawJson(raw: unknown): string | undefined {
  if (raw === undefined || raw === null || typeof raw === 'string' || textFields(raw).length > 0)
    return undefined;
  return JSON.stringify(raw);
}

function textFields(raw: unknown): string[] {
  if (!raw || typeof raw !== 'object') return [];
  const record = raw as Record<string, unknown>;
  return ['output', 'formatted_output', 'aggregated_output', 'stdout', 'content', 'result']
    .map((key) => record[key])
    .filter((value): value is string => typeof value === 'string');
}

function contentText(content: ToolCallContent): string | undefined {
  if (content.type === 'content') return content.content.type === 'text' ? content.content.text : undefined;
  if (content.type === 'diff') return `edited ${content.path}`;
  return undefined;
}

function exitCodeOf(raw: unknown): number | undefined {
  if (!raw || typeof raw !== 'object') return undefined;
  const record = raw as Record<string, unknown>;
  const code = record.exit_code ?? record.exitCode;
  return typeof code === 'number' && Number.isInteger(code) ? code : undefined;
}
