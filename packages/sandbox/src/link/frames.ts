import { harnessTurnResultSchema } from '@paddock/harness';
import { draftEventSchema, sandboxExecSchema } from '@paddock/protocol';
import type { ModelMessage } from 'ai';
import { z } from 'zod';
import type { RunnerMessage, ServerMessage } from './protocol.ts';

/**
 * The runner link's frames as schemas. Either end may be a machine the other does not control (a
 * self-hosted runner is a user's), so each end parses what it receives with these before acting on
 * it; a frame that does not parse ends the link. The types stay in `protocol.ts`; the checks at the
 * bottom fail to compile when a frame or a field there has no schema here.
 */

const id = z.string().min(1).max(200);
const req = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const index = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const sandboxStatus = z.looseObject({
  status: z.string(),
  isolation: z.string().optional(),
  detail: z.string().optional(),
});

const runnerFrames = [
  z.object({
    type: z.literal('hello'),
    runner_id: id,
    sandboxes: z.array(id),
    turns: z.array(z.object({ turn_id: id, thread_id: id })),
  }),
  z.object({ type: z.literal('ensure.status'), req, status: sandboxStatus }),
  z.object({
    type: z.literal('ensure.output'),
    req,
    stream: z.enum(['stdout', 'stderr', 'status']),
    text: z.string(),
    exit_code: z.number().int().optional(),
  }),
  z.object({ type: z.literal('ensure.done'), req, booted: z.boolean(), error: z.string().optional() }),
  z.object({ type: z.literal('sandbox.gone'), thread_id: id, status: sandboxStatus }),
  z.object({ type: z.literal('turn.event'), turn_id: id, index, event: draftEventSchema }),
  z.object({ type: z.literal('turn.result'), turn_id: id, index, result: harnessTurnResultSchema }),
  z.object({ type: z.literal('steer.result'), req, taken: z.boolean() }),
  // The result's shape depends on the request: the hub checks it with `sandboxExecResultSchemas`.
  z.object({
    type: z.literal('exec.result'),
    req,
    result: z.unknown().optional(),
    error: z.string().optional(),
  }),
] as const;

export const runnerMessageSchema = z.discriminatedUnion('type', runnerFrames);

const serverFrames = [
  z.object({
    type: z.literal('ensure'),
    req,
    thread_id: id,
    workspace_dir: z.string(),
    env: z.record(z.string(), z.string()),
    size: z.enum(['S', 'M', 'L']),
    entrypoint: z.string().optional(),
    lifecycle: z
      .object({
        idle: z
          .object({
            freezeAfterMs: z.number().nonnegative().optional(),
            stopAfterMs: z.number().nonnegative(),
          })
          .optional(),
        expiresAt: z.number().optional(),
      })
      .optional(),
    shared_dir: z.string().optional(),
  }),
  z.object({
    type: z.literal('turn'),
    thread_id: id,
    command: z.object({
      turn_id: id,
      harness: z.string(),
      model: z.string(),
      instructions: z.string().optional(),
      // The harness's model call checks each message in full; here, enough to hand them on.
      messages: z.array(
        z.custom<ModelMessage>((m) => typeof (m as { role?: unknown } | null)?.role === 'string'),
      ),
    }),
  }),
  z.object({ type: z.literal('attach'), turn_id: id, from_index: index }),
  z.object({ type: z.literal('ack'), turn_id: id, index: z.number().int().min(-1) }),
  z.object({ type: z.literal('abandon'), turn_id: id }),
  z.object({ type: z.literal('interrupt'), thread_id: id, turn_id: id }),
  z.object({ type: z.literal('interrupt-orphan'), thread_id: id }),
  z.object({
    type: z.literal('steer'),
    req,
    thread_id: id,
    turn_id: id,
    messages: z.array(z.object({ id, content: z.string() })),
  }),
  z.object({ type: z.literal('exec'), req, thread_id: id, request: sandboxExecSchema }),
] as const;

export const serverMessageSchema = z.discriminatedUnion('type', serverFrames);

/**
 * Parses one frame as text: the message, or why it is not one (short, for a log line and a close
 * reason; never the frame's content) and the turn it names, if it names one.
 */
export function parseFrame<S extends z.ZodType>(
  schema: S,
  data: unknown,
): { message: z.infer<S> } | { error: string; turnId?: string } {
  let json: unknown;
  try {
    json = JSON.parse(String(data));
  } catch {
    return { error: 'not JSON' };
  }
  const parsed = schema.safeParse(json);
  if (parsed.success) return { message: parsed.data };
  const issue = parsed.error.issues[0]!;
  const { type, turn_id: turnId } = (json ?? {}) as { type?: unknown; turn_id?: unknown };
  const frame = typeof type === 'string' ? type.slice(0, 40) : 'frame';
  return {
    error: `${frame}: ${issue.path.join('.') || 'type'}: ${issue.message}`.slice(0, 120),
    ...(typeof turnId === 'string' ? { turnId } : {}),
  };
}

// Compile-time: every frame and field of the types in protocol.ts has a schema here, and what the
// schemas parse is a frame of those types (an exec's result is checked against its request apart).
type Uncovered<T extends { type: string }, P extends { type: string }> = {
  [K in T['type']]: Exclude<keyof Extract<T, { type: K }>, keyof Extract<P, { type: K }>>;
}[T['type']];
type Expect<T extends true> = T;
type Is<A, B> = [A] extends [B] ? true : false;
type RunnerParsed = z.infer<typeof runnerMessageSchema>;
type ServerParsed = z.infer<typeof serverMessageSchema>;
export type FramesMatchProtocol = [
  Expect<Is<RunnerMessage['type'], RunnerParsed['type']>>,
  Expect<Is<ServerMessage['type'], ServerParsed['type']>>,
  Expect<Is<Uncovered<RunnerMessage, RunnerParsed>, never>>,
  Expect<Is<Uncovered<ServerMessage, ServerParsed>, never>>,
  Expect<Is<Exclude<RunnerParsed, { type: 'exec.result' }>, RunnerMessage>>,
  Expect<Is<ServerParsed, ServerMessage>>,
];
