import { z } from 'zod';

/** Event types a thread emits (D6). */
export const eventTypes = [
  'user.message',
  'turn.started',
  'assistant.message.chunk',
  'assistant.message',
  'reasoning.chunk',
  'tool_call.start',
  'tool_call.update',
  'tool_call.end',
  'plan.update',
  'mcp.status',
  'sandbox.status',
  'entrypoint.output',
  'usage',
  'error',
  'turn.ended',
  'idle',
] as const;
export type EventType = (typeof eventTypes)[number];

export const threadStatuses = ['running', 'success', 'fail', 'need_more_info', 'idle'] as const;
export type ThreadStatus = (typeof threadStatuses)[number];

export const outcomeStatuses = ['success', 'fail', 'need_more_info'] as const;
export type OutcomeStatus = (typeof outcomeStatuses)[number];

export const stopReasons = ['end_turn', 'cancelled', 'error', 'max_turns'] as const;
export type StopReason = (typeof stopReasons)[number];

/** The `data` payload of each event type, as harnesses and the runtime produce them. */
export interface EventData {
  'user.message': { message_id: string; content: string; role: string };
  'turn.started': { turn_id: string };
  'assistant.message.chunk': { content: { type: 'text'; content: string }[] };
  'assistant.message': { message_id: string; content: string; model: string };
  'reasoning.chunk': { content: { type: 'text'; content: string }[] };
  'tool_call.start': { tool_id: string; name: string; input: unknown };
  'tool_call.update': { tool_id: string; output: string };
  'tool_call.end': {
    tool_id: string;
    status: 'ok' | 'error';
    output?: string;
    error?: string;
    exit_code?: number;
  };
  'plan.update': { entries: unknown[] };
  'mcp.status': { name: string; status: string; error?: string };
  'sandbox.status': { status: string; isolation?: string; detail?: string };
  'entrypoint.output': { stream: 'stdout' | 'stderr' | 'status'; text: string; exit_code?: number };
  usage: { input_tokens: number; output_tokens: number; model: string };
  error: { code: string; message: string; retryable: boolean };
  'turn.ended': { stop_reason: StopReason };
  idle: { status: ThreadStatus; summary: string };
}

/** An event before it is stored: what a harness or the runtime emits. */
export type DraftEvent = { [K in EventType]: { type: K; data: EventData[K]; tool_id?: string } }[EventType];

/** A stored thread event as it appears on the stream and in listings (D6). */
export const threadEventSchema = z.object({
  id: z.string(),
  seq: z.number().int(),
  type: z.string(),
  thread_id: z.string(),
  turn_id: z.string().nullable(),
  tool_id: z.string().nullable(),
  ts: z.string(),
  data: z.record(z.string(), z.unknown()),
});
export type ThreadEvent = z.infer<typeof threadEventSchema>;
