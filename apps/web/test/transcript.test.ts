import type { StreamedEvent } from '@paddock/sdk';
import { describe, expect, it } from 'vitest';
import { emptyTranscript, foldEvent } from '../src/features/threads/transcript.ts';

let seq = 0;
const event = (type: string, data: Record<string, unknown>): StreamedEvent => ({
  id: `e${++seq}`,
  seq,
  type,
  thread_id: 't',
  turn_id: null,
  ts: '2026-11-28T00:00:00.000000',
  data,
});

describe('the thread page transcript', () => {
  it('streams a reply in chunks, pairs a tool call with its end, and ignores events it already has', () => {
    seq = 0;
    const events = [
      event('user.message', { content: 'hi', message_id: 'm1', role: 'user' }),
      event('tool_call.start', { tool_id: 'x', name: 'shell', input: { command: 'ls' } }),
      event('assistant.message.chunk', { content: [{ type: 'text', content: 'Hel' }] }),
      event('tool_call.end', { tool_id: 'x', status: 'ok', output: 'a.txt' }),
      event('assistant.message.chunk', { content: [{ type: 'text', content: 'lo' }] }),
    ];
    let t = events.reduce(foldEvent, emptyTranscript);
    expect(t.entries).toEqual([
      { kind: 'user', key: '1', text: 'hi' },
      {
        kind: 'tool',
        key: 'tool-x',
        name: 'shell',
        input: '{\n  "command": "ls"\n}',
        output: 'a.txt',
        status: 'ok',
      },
      { kind: 'assistant', key: '3', text: 'Hello', streaming: true },
    ]);
    // A reconnect replays what was seen: nothing doubles.
    expect(events.reduce(foldEvent, t)).toBe(t);
    t = foldEvent(t, event('assistant.message', { content: 'Hello.', message_id: 'm2', model: 'scripted' }));
    t = foldEvent(t, event('turn.ended', { stop_reason: 'cancelled' }));
    expect(t.entries.slice(2)).toEqual([
      { kind: 'assistant', key: '3', text: 'Hello.', streaming: false },
      { kind: 'note', key: '7', text: 'turn ended: cancelled' },
    ]);
    expect(t.seq).toBe(7);
  });
});
