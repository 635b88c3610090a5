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
  'skills.resolved',
  'harness.install',
  'permission.request',
  'sandbox.status',
  'entrypoint.output',
  'network.request',
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

export const mcpStatuses = ['connecting', 'connected', 'failed', 'needs_auth'] as const;

/** An MCP server's state in the sandbox, at a turn's start and whenever it changes. */
export interface McpStatusData {
  name: string;
  transport: 'stdio' | 'http';
  status: (typeof mcpStatuses)[number];
  tool_count: number;
  /** Why it failed or needs authorization; null otherwise. */
  error: string | null;
}

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
  'mcp.status': McpStatusData;
  /** The registry skills a thread got, each source's version (D14); once, when the thread is created. */
  'skills.resolved': { skills: { source: string; creator: string; slug: string; version: string }[] };
  /** A coding-agent program being installed on the runner for the turn that needs it first (D9). */
  'harness.install': {
    harness: string;
    program: string;
    version: string;
    status: 'installing' | 'installed' | 'failed';
    detail?: string;
  };
  /** An ACP agent asked to act, and the harness answered by policy (allow: the sandbox is the boundary). */
  'permission.request': { tool_id: string | null; title: string; decision: string; option_id: string | null };
  'sandbox.status': { status: string; isolation?: string; detail?: string };
  'entrypoint.output': { stream: 'stdout' | 'stderr' | 'status'; text: string; exit_code?: number };
  /**
   * A connection the sandbox made through its egress proxy (issue 15), reported when it ends; not a
   * turn's (no `turn_id`). `allowed: false`: the proxy refused it and sent nothing anywhere.
   */
  'network.request': {
    host: string;
    port: number;
    method: 'CONNECT' | 'HTTP';
    allowed: boolean;
    reason?: string;
    bytes_out: number;
    bytes_in: number;
  };
  usage: { input_tokens: number; output_tokens: number; model: string };
  error: { code: string; message: string; retryable: boolean };
  'turn.ended': { stop_reason: StopReason };
  idle: { status: ThreadStatus; summary: string };
}

/** An event before it is stored: what a harness or the runtime emits. */
export type DraftEvent = { [K in EventType]: { type: K; data: EventData[K]; tool_id?: string } }[EventType];

const text = z.string();
const textChunks = z.array(z.looseObject({ type: z.literal('text'), content: text }));
/**
 * `EventData` as schemas, for events that come from a peer the server does not trust (a runner
 * on a user's machine): every field the type names is checked; fields beyond them are kept.
 */
export const eventDataSchemas = {
  'user.message': z.looseObject({ message_id: text, content: text, role: text }),
  'turn.started': z.looseObject({ turn_id: text }),
  'assistant.message.chunk': z.looseObject({ content: textChunks }),
  'assistant.message': z.looseObject({ message_id: text, content: text, model: text }),
  'reasoning.chunk': z.looseObject({ content: textChunks }),
  'tool_call.start': z.looseObject({ tool_id: text, name: text, input: z.unknown() }),
  'tool_call.update': z.looseObject({ tool_id: text, output: text }),
  'tool_call.end': z.looseObject({
    tool_id: text,
    status: z.enum(['ok', 'error']),
    output: text.optional(),
    error: text.optional(),
    exit_code: z.number().int().optional(),
  }),
  'plan.update': z.looseObject({ entries: z.array(z.unknown()) }),
  'mcp.status': z.looseObject({
    name: text,
    transport: z.enum(['stdio', 'http']),
    status: z.enum(mcpStatuses),
    tool_count: z.number().int().nonnegative(),
    error: text.nullable(),
  }),
  'skills.resolved': z.looseObject({
    skills: z.array(z.looseObject({ source: text, creator: text, slug: text, version: text })),
  }),
  'harness.install': z.looseObject({
    harness: text,
    program: text,
    version: text,
    status: z.enum(['installing', 'installed', 'failed']),
    detail: text.optional(),
  }),
  'permission.request': z.looseObject({
    tool_id: text.nullable(),
    title: text,
    decision: text,
    option_id: text.nullable(),
  }),
  'sandbox.status': z.looseObject({ status: text, isolation: text.optional(), detail: text.optional() }),
  'entrypoint.output': z.looseObject({
    stream: z.enum(['stdout', 'stderr', 'status']),
    text,
    exit_code: z.number().int().optional(),
  }),
  'network.request': z.looseObject({
    host: text,
    port: z.number().int().min(1).max(65_535),
    method: z.enum(['CONNECT', 'HTTP']),
    allowed: z.boolean(),
    reason: text.optional(),
    bytes_out: z.number().int().nonnegative(),
    bytes_in: z.number().int().nonnegative(),
  }),
  usage: z.looseObject({
    input_tokens: z.number().int().nonnegative(),
    output_tokens: z.number().int().nonnegative(),
    model: text,
  }),
  error: z.looseObject({ code: text, message: text, retryable: z.boolean() }),
  'turn.ended': z.looseObject({ stop_reason: z.enum(stopReasons) }),
  idle: z.looseObject({ status: z.enum(threadStatuses), summary: text }),
} satisfies { [K in EventType]: z.ZodType<EventData[K]> };

export const draftEventSchema = z.discriminatedUnion(
  'type',
  eventTypes.map((type) =>
    z.object({ type: z.literal(type), data: eventDataSchemas[type], tool_id: text.optional() }),
  ) as unknown as [z.ZodObject, ...z.ZodObject[]],
) as unknown as z.ZodType<DraftEvent>;

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
