import { harnessTurnResultSchema } from '@paddock/harness';
import {
  type ConversationMessage,
  draftEventSchema,
  eventDataSchemas,
  networkPolicySchema,
  sandboxExecSchema,
  sandboxLifecycleSchema,
  skillFileSchema,
  skillLimits,
  skillNameSchema,
  skillVersionSchema,
  steeredMessageSchema,
  turnCommandSchema,
} from '@paddock/protocol';
import { z } from 'zod';

/**
 * A detached runner (`paddock runner`) and the server speak JSON messages over one WebSocket, which
 * the runner opens and reopens. Everything a turn produces is numbered (`index`, from 0) and kept
 * by the runner until the server acknowledges it as stored, so after a reconnect, or a restart of
 * the server, the server asks for the rest from the first index it has not stored: nothing is lost
 * and nothing is stored twice.
 *
 * The messages are defined once, here, as schemas; their types are inferred from them. Either end
 * may be a machine the other does not control (a self-hosted runner is a user's), so each end parses
 * what it receives with these (`parseFrame`) before acting on it.
 */

/** The path of the server's runner endpoint. */
export const runnerLinkPath = '/v2/runner/link';

const id = z.string().min(1).max(200);
const req = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const index = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const sandboxStatus = z.looseObject({
  status: z.string(),
  isolation: z.string().optional(),
  detail: z.string().optional(),
});

/** A skill version a self-hosted runner writes itself (`ensure.skill_versions`); digest: the registry's hash. */
const skillVersion = z.object({
  slug: skillNameSchema,
  creator: skillNameSchema,
  version: skillVersionSchema,
  digest: z.string().regex(/^[0-9a-f]{64}$/),
});

export const runnerMessageSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('hello'),
    runner_id: id,
    /** Threads whose sandbox runs here. */
    sandboxes: z.array(id),
    /** Turns this runner still holds something of: running, or finished with the result not acknowledged. */
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
  /** A connection the thread's sandbox made through its egress proxy (the thread's `network.request`). */
  z.object({
    type: z.literal('network.request'),
    thread_id: id,
    record: eventDataSchemas['network.request'],
  }),
  /** The files of one of `skill_versions` of the open boot `req` (answered by `skill.files`). */
  z.object({ type: z.literal('skill.fetch'), req, slug: skillNameSchema }),
  /**
   * `error` when the sandbox could not run it (none runs, it died); a failing program has a
   * `result`, whose shape depends on the request: the hub checks it with `sandboxExecResultSchemas`.
   */
  z.object({
    type: z.literal('exec.result'),
    req,
    result: z.unknown().optional(),
    error: z.string().optional(),
  }),
]);

export const serverMessageSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('ensure'),
    req,
    thread_id: id,
    workspace_dir: z.string(),
    /** The agent's secrets and PADDOCK_TOKEN; the runner adds PADDOCK_API_URL as it reaches the server. */
    env: z.record(z.string(), z.string()),
    size: z.enum(['S', 'M', 'L']),
    entrypoint: z.string().optional(),
    lifecycle: sandboxLifecycleSchema.optional(),
    shared_dir: z.string().optional(),
    skills: z.array(z.object({ slug: z.string(), host_dir: z.string() })).optional(),
    /**
     * The thread's skills for a runner that cannot see the server's folders (self-hosted): it
     * writes each version it lacks into its own folder, asking for the files with `skill.fetch`.
     */
    skill_versions: z.array(skillVersion).optional(),
    /** What the sandbox may reach through its egress proxy; `registries` when left out. */
    network: networkPolicySchema.optional(),
  }),
  /** The answer to `skill.fetch`: the version's files (base64), or why there are none. */
  z.object({
    type: z.literal('skill.files'),
    req,
    slug: skillNameSchema,
    files: z.array(skillFileSchema).max(skillLimits.files).optional(),
    error: z.string().optional(),
  }),
  z.object({
    type: z.literal('turn'),
    thread_id: id,
    // The harness's model call checks each message in full; here, enough to hand them on.
    command: turnCommandSchema(
      z.custom<ConversationMessage>((m) => typeof (m as { role?: unknown } | null)?.role === 'string'),
    ),
  }),
  /** Send the turn's messages from `from_index` on, then keep sending (adoption, or a reconnect). */
  z.object({ type: z.literal('attach'), turn_id: id, from_index: index }),
  /** Everything of the turn up to `index` is stored; a stored result ends the runner's record of it. */
  z.object({ type: z.literal('ack'), turn_id: id, index: z.number().int().min(-1) }),
  /**
   * No server will take this turn any more (the adoption window passed): forget what it produces.
   * It runs on, and the sandbox refuses new turns meanwhile, until it ends or a Stop interrupts it.
   */
  z.object({ type: z.literal('abandon'), turn_id: id }),
  z.object({ type: z.literal('interrupt'), thread_id: id, turn_id: id }),
  /** Interrupt the thread's running turn if it is one no server follows (abandoned, or unknown here). */
  z.object({ type: z.literal('interrupt-orphan'), thread_id: id }),
  z.object({
    type: z.literal('steer'),
    req,
    thread_id: id,
    turn_id: id,
    messages: z.array(steeredMessageSchema),
  }),
  /** Code to run in the thread's running sandbox beside any turn; answered by one `exec.result`. */
  z.object({ type: z.literal('exec'), req, thread_id: id, request: sandboxExecSchema }),
]);

export type RunnerMessage = z.infer<typeof runnerMessageSchema>;
export type ServerMessage = z.infer<typeof serverMessageSchema>;
export type TurnEntry = Extract<RunnerMessage, { type: 'turn.event' | 'turn.result' }>;

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
