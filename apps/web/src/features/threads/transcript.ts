import type { StreamedEvent } from '@paddock/sdk';

/** What the thread page shows, built from the thread's events in seq order. */
export type Entry =
  | { kind: 'user'; key: string; text: string }
  | { kind: 'assistant'; key: string; text: string; streaming: boolean }
  | {
      kind: 'tool';
      key: string;
      name: string;
      input: string;
      output: string;
      status: 'running' | 'ok' | 'error';
    }
  | { kind: 'note'; key: string; text: string };

export interface Transcript {
  entries: Entry[];
  /** The newest seq folded in: a reconnect resumes after it, and replays are ignored. */
  seq: number;
}

export const emptyTranscript: Transcript = { entries: [], seq: 0 };

const chunkText = (content: unknown) =>
  Array.isArray(content)
    ? content.map((c) => (c && typeof c === 'object' && 'content' in c ? String(c.content) : '')).join('')
    : '';

const show = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value, null, 2));

/** Folds one event in; an event at or below the newest seq (a replay after a reconnect) changes nothing. */
export function foldEvent(transcript: Transcript, event: StreamedEvent): Transcript {
  if (event.seq <= transcript.seq) return transcript;
  const entries = [...transcript.entries];
  const data = event.data as Record<string, unknown>;
  const key = String(event.seq);
  const last = entries.at(-1);
  switch (event.type) {
    case 'user.message':
      entries.push({ kind: 'user', key, text: String(data.content ?? '') });
      break;
    case 'assistant.message.chunk':
      if (last?.kind === 'assistant' && last.streaming)
        entries[entries.length - 1] = { ...last, text: last.text + chunkText(data.content) };
      else entries.push({ kind: 'assistant', key, text: chunkText(data.content), streaming: true });
      break;
    case 'assistant.message':
      if (last?.kind === 'assistant' && last.streaming)
        entries[entries.length - 1] = { ...last, text: String(data.content ?? last.text), streaming: false };
      else entries.push({ kind: 'assistant', key, text: String(data.content ?? ''), streaming: false });
      break;
    case 'tool_call.start':
      entries.push({
        kind: 'tool',
        key: `tool-${String(data.tool_id)}`,
        name: String(data.name ?? 'tool'),
        input: show(data.input),
        output: '',
        status: 'running',
      });
      break;
    case 'tool_call.update':
    case 'tool_call.end': {
      const index = entries.findIndex((e) => e.kind === 'tool' && e.key === `tool-${String(data.tool_id)}`);
      const tool = entries[index];
      if (tool?.kind !== 'tool') break;
      entries[index] = {
        ...tool,
        output: String(data.output ?? data.error ?? tool.output),
        status: event.type === 'tool_call.end' ? (data.status === 'error' ? 'error' : 'ok') : tool.status,
      };
      break;
    }
    case 'turn.ended':
      if (data.stop_reason !== 'end_turn')
        entries.push({ kind: 'note', key, text: `turn ended: ${String(data.stop_reason)}` });
      break;
    case 'error':
      entries.push({ kind: 'note', key, text: `error: ${String(data.message ?? data.code)}` });
      break;
  }
  return { entries, seq: event.seq };
}
