import { harnessTurnResultSchema } from '@paddock/harness';
import { draftEventSchema } from '@paddock/protocol';
import { z } from 'zod';
import type { SupervisorMessage } from './protocol.ts';

/**
 * The supervisor's messages as schemas. The supervisor runs as the sandbox's uid, so the agent's own
 * code can take it over (or copy its stdout with pidfd_getfd) and write anything: the runner, which
 * may run inside the server as root, parses each line with these before acting on it, and a line
 * that does not parse breaks the sandbox off (see `SupervisorChannel`). The types stay in
 * `protocol.ts`; the checks at the bottom fail to compile when a message or a field there has no
 * schema here.
 */

/**
 * The longest line taken from a supervisor. A line is held whole until its newline arrives, so this
 * bounds what one sandbox can make the runner hold; it matches the runner link's largest frame
 * (a detached runner forwards the same events and results over it).
 */
export const maxSupervisorLineChars = 64 * 1024 * 1024;

const id = z.string().min(1).max(200);

const supervisorFrames = [
  z.object({ type: z.literal('steer.result'), steer_id: id, delivered: z.boolean() }),
  // The result's shape depends on the request: `ThreadSandbox` checks it with `sandboxExecResultSchemas`.
  z.object({
    type: z.literal('exec.result'),
    exec_id: id,
    result: z.unknown().optional(),
    error: z.string().max(10_000).optional(),
  }),
  z.object({
    type: z.literal('ready'),
    pid: z
      .number()
      .int()
      .positive()
      .max(2 ** 22),
  }),
  z.object({ type: z.literal('warm') }),
  z.object({ type: z.literal('agents.started'), harnesses: z.array(z.string().max(100)).max(20) }),
  z.object({ type: z.literal('entrypoint.output'), stream: z.enum(['stdout', 'stderr']), text: z.string() }),
  z.object({ type: z.literal('entrypoint.exit'), exit_code: z.number().int() }),
  z.object({ type: z.literal('event'), turn_id: id, event: draftEventSchema }),
  z.object({ type: z.literal('turn.result'), turn_id: id, result: harnessTurnResultSchema }),
  z.object({ type: z.literal('log'), level: z.enum(['info', 'warn', 'error']), message: z.string() }),
] as const;

export const supervisorMessageSchema = z.discriminatedUnion('type', supervisorFrames);

// Compile-time: every message and field of `SupervisorMessage` has a schema here, and what the schema
// parses is a `SupervisorMessage` (an exec's result is checked against its request apart).
type Uncovered<T extends { type: string }, P extends { type: string }> = {
  [K in T['type']]: Exclude<keyof Extract<T, { type: K }>, keyof Extract<P, { type: K }>>;
}[T['type']];
type Expect<T extends true> = T;
type Is<A, B> = [A] extends [B] ? true : false;
type Parsed = z.infer<typeof supervisorMessageSchema>;
export type SupervisorFramesMatchProtocol = [
  Expect<Is<SupervisorMessage['type'], Parsed['type']>>,
  Expect<Is<Parsed['type'], SupervisorMessage['type']>>,
  Expect<Is<Uncovered<SupervisorMessage, Parsed>, never>>,
  Expect<Is<Exclude<Parsed, { type: 'exec.result' }>, SupervisorMessage>>,
];
