import type { SessionUpdate } from '@agentclientprotocol/sdk';
import type { DraftEvent } from '@paddock/protocol';
import { describe, expect, it } from 'vitest';
import { createAcpRecorder } from '../src/acp/acp-recorder.ts';
import { conversationText, newestUserText } from '../src/acp/conversation-text.ts';

function record(updates: SessionUpdate[], cancelled = false) {
  const events: DraftEvent[] = [];
  const recorder = createAcpRecorder((event) => events.push(event), 'scripted');
  for (const update of updates) recorder.update(update);
  return { events, turn: recorder.close(cancelled) };
}

const text = (t: string): SessionUpdate => ({
  sessionUpdate: 'agent_message_chunk',
  content: { type: 'text', text: t },
});

describe('ACP updates as Paddock events (D6)', () => {
  it('streams text, ends a message where a tool call starts, and starts a tool once its input is known', () => {
    const { events, turn } = record([
      text('Let me '),
      text('look.'),
      {
        sessionUpdate: 'tool_call',
        toolCallId: 't1',
        title: 'Terminal',
        kind: 'execute',
        status: 'pending',
        rawInput: {},
      },
      { sessionUpdate: 'tool_call_update', toolCallId: 't1', rawInput: { command: 'ls' } },
      {
        sessionUpdate: 'tool_call_update',
        toolCallId: 't1',
        content: [{ type: 'content', content: { type: 'text', text: 'a.txt' } }],
      },
      {
        sessionUpdate: 'tool_call_update',
        toolCallId: 't1',
        status: 'completed',
        rawOutput: { exit_code: 0, stdout: 'a.txt' },
      },
      { sessionUpdate: 'plan', entries: [{ content: 'list', priority: 'high', status: 'completed' }] },
      { sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: 'hm' } },
      text('Done.'),
    ]);
    expect(events.map((e) => e.type)).toEqual([
      'assistant.message.chunk',
      'assistant.message.chunk',
      'assistant.message',
      'tool_call.start',
      'tool_call.update',
      'tool_call.end',
      'plan.update',
      'reasoning.chunk',
      'assistant.message.chunk',
      'assistant.message',
    ]);
    expect(events[2]!.data).toMatchObject({ content: 'Let me look.', model: 'scripted' });
    expect(events[3]!.data).toEqual({ tool_id: 't1', name: 'Terminal', input: { command: 'ls' } });
    expect(events[5]!.data).toEqual({ tool_id: 't1', status: 'ok', output: 'a.txt', exit_code: 0 });
    expect(turn.lastAssistantText).toBe('Done.');
    expect(turn.messages).toEqual([
      { role: 'assistant', content: [{ type: 'text', text: 'Let me look.' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] },
    ]);
    expect(turn.assistantIds).toEqual(
      events
        .filter((e) => e.type === 'assistant.message')
        .map((e) => (e.data as { message_id: string }).message_id),
    );
  });

  it('ends a failed call and a non-zero exit as errors, and closes open and announced calls at the end', () => {
    const { events } = record(
      [
        {
          sessionUpdate: 'tool_call',
          toolCallId: 'a',
          title: 'Run',
          status: 'in_progress',
          rawInput: { command: 'false' },
        },
        {
          sessionUpdate: 'tool_call_update',
          toolCallId: 'a',
          status: 'completed',
          rawOutput: { exit_code: 1, output: '' },
        },
        {
          sessionUpdate: 'tool_call',
          toolCallId: 'b',
          title: 'Read',
          status: 'in_progress',
          rawInput: { path: 'x' },
        },
        {
          sessionUpdate: 'tool_call_update',
          toolCallId: 'b',
          status: 'failed',
          content: [{ type: 'content', content: { type: 'text', text: 'no such file' } }],
        },
        {
          sessionUpdate: 'tool_call',
          toolCallId: 'c',
          title: 'Sleep',
          status: 'in_progress',
          rawInput: { s: 9 },
        },
        { sessionUpdate: 'tool_call', toolCallId: 'd', title: 'Pending', status: 'pending' },
      ],
      true,
    );
    const ends = events.filter((e) => e.type === 'tool_call.end').map((e) => e.data);
    expect(ends).toEqual([
      { tool_id: 'a', status: 'error', output: '', exit_code: 1 },
      { tool_id: 'b', status: 'error', error: 'no such file' },
      { tool_id: 'c', status: 'error', error: 'cancelled' },
      { tool_id: 'd', status: 'error', error: 'cancelled' },
    ]);
    expect(events.filter((e) => e.type === 'tool_call.start').map((e) => e.tool_id)).toEqual([
      'a',
      'b',
      'c',
      'd',
    ]);
  });

  it('ends a call with the output its updates carried when the end carries none, and skips empty raw fields', () => {
    const call = (id: string): SessionUpdate => ({
      sessionUpdate: 'tool_call',
      toolCallId: id,
      title: 'Run',
      status: 'in_progress',
      rawInput: { command: 'echo []' },
    });
    const { events } = record([
      call('a'),
      {
        sessionUpdate: 'tool_call_update',
        toolCallId: 'a',
        content: [{ type: 'content', content: { type: 'text', text: '[]' } }],
      },
      { sessionUpdate: 'tool_call_update', toolCallId: 'a', status: 'in_progress' },
      {
        sessionUpdate: 'tool_call_update',
        toolCallId: 'a',
        status: 'completed',
        rawOutput: { exit_code: 0 },
      },
      call('b'),
      {
        sessionUpdate: 'tool_call_update',
        toolCallId: 'b',
        status: 'completed',
        rawOutput: { exit_code: 0, formatted_output: '', aggregated_output: '[]\n' },
      },
    ]);
    // One update for the output carried once, none for the status-only update after it.
    expect(events.filter((e) => e.type === 'tool_call.update')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'tool_call.end').map((e) => e.data)).toEqual([
      { tool_id: 'a', status: 'ok', output: '[]', exit_code: 0 },
      { tool_id: 'b', status: 'ok', output: '[]\n', exit_code: 0 },
    ]);
  });
});

describe('the conversation as a program is told it', () => {
  const messages = [
    { role: 'user' as const, content: 'remember marigold\n::sh rm -rf x' },
    { role: 'assistant' as const, content: [{ type: 'text' as const, text: 'noted' }] },
    { role: 'user' as const, content: 'first' },
    { role: 'user' as const, content: 'second' },
  ];

  it('prompts with the user messages after the last answer', () => {
    expect(newestUserText(messages)).toBe('first\n\nsecond');
  });

  it('quotes earlier messages so nothing in them reads as a new instruction', () => {
    const told = conversationText(messages)!;
    expect(told).toContain('User:\n> remember marigold\n> ::sh rm -rf x');
    expect(told).toContain('You:\n> noted');
    expect(told).not.toContain('first');
    expect(told.split('\n').some((line) => line.startsWith('::'))).toBe(false);
    expect(conversationText([{ role: 'user', content: 'only' }])).toBeUndefined();
  });
});
