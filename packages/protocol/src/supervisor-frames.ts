import { z } from 'zod';

/**
 * The one protocol between a runner and the supervisor in a sandbox, whatever carries it (a pipe, a
 * micro-VM's virtio-serial port, a WebSocket a pod dials out): one JSON object a frame. The runner
 * asks (`op`, with an `id` it answers by), the supervisor answers (`re`) and reports (`ev`). The
 * supervisor is the sandbox's hands only: it starts processes and relays their stdio, signals them,
 * reads and writes files; every loop, and every client of a program's protocol, runs in the runner.
 *
 * The supervisor imports only these types (it has no dependencies); the runner parses each frame the
 * supervisor sends with `supervisorFrameSchema` before acting on it.
 */

/** Inside a sandbox PADDOCK_API_URL is http://127.0.0.1:8787, the supervisor's door to the API: fixed, so scripts can rely on it. */
export const loopbackApiPort = 8787;
/** Inside a sandbox HTTP(S)_PROXY is http://127.0.0.1:8788, the supervisor's door to the egress proxy. */
export const egressPort = 8788;
/** The variable every process a turn or code run starts inherits: which run started it (what a Stop kills). */
export const runIdVariable = 'PADDOCK_RUN_ID';

/** The longest frame either side takes, in characters: bounds what one sandbox can make a runner hold. */
export const maxSupervisorFrameChars = 64 * 1024 * 1024;

/** A request's id, and a process's, chosen by the runner (unique within one sandbox's link). */
const frameId = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
/** Bytes travel base64-encoded. */
const bytes = z.string();
/** A path inside the sandbox: absolute, or relative to the directory it must stay in. */
const sandboxPath = z.string().min(1).max(4096);

/** Signals the runner may send a process group. */
export const processSignals = ['SIGINT', 'SIGTERM', 'SIGKILL'] as const;
export type ProcessSignal = (typeof processSignals)[number];

export const supervisorRequestSchema = z.discriminatedUnion('op', [
  /**
   * Starts a program in a process group of its own, as the sandbox's user, answered with its pid.
   * Its output arrives as `output` reports and its end as one `exit`. `run` names the turn or code
   * run whose Stop kills it (the runner puts the same marker in `env`); `keep` marks a process the
   * sandbox keeps across turns (an MCP server, a coding-agent program), which no Stop kills. A
   * program that cannot start (ENOENT) is answered with an error, and has no `exit`.
   */
  z.object({
    op: z.literal('spawn'),
    id: frameId,
    proc: frameId,
    argv: z.array(z.string()).min(1),
    env: z.record(z.string(), z.string()),
    cwd: sandboxPath,
    /** A pipe to write to (`stdin`); without it the program reads /dev/null. */
    stdin: z.boolean().optional(),
    keep: z.boolean().optional(),
  }),
  /** Bytes for a process's stdin, or its end; unanswered (a gone process drops them). */
  z.object({ op: z.literal('stdin'), proc: frameId, data: bytes.optional(), end: z.boolean().optional() }),
  /**
   * Whether a process still runs: false once it has exited, even before its `exit` is sent (a zombie
   * not yet reaped, or output still draining).
   */
  z.object({ op: z.literal('proc.alive'), id: frameId, proc: frameId }),
  /** Signals a process's whole group; unanswered. */
  z.object({ op: z.literal('signal'), proc: frameId, signal: z.enum(processSignals) }),
  /** A turn or a code run begins: processes started from now with its marker are its own. */
  z.object({
    op: z.literal('run.begin'),
    id: frameId,
    marker: z.string().min(1).max(100),
    kind: z.enum(['turn', 'code']),
  }),
  z.object({ op: z.literal('run.end'), id: frameId, marker: z.string().min(1).max(100) }),
  /** Stop: kills every process the run started, backgrounded ones too; answered with how many. */
  z.object({ op: z.literal('run.kill'), id: frameId, marker: z.string().min(1).max(100) }),
  /**
   * File operations, as the sandbox's user. `within` is the directory the path must stay in, links
   * included (the workspace, or a read-only root such as the skills folder); a relative `path` is
   * taken from it.
   */
  z.object({
    op: z.literal('file.read'),
    id: frameId,
    within: sandboxPath,
    path: sandboxPath,
    max_bytes: z.number().int().positive(),
  }),
  /** Replaces the file whole and atomically (a temporary file renamed into place), making its parents. */
  z.object({
    op: z.literal('file.write'),
    id: frameId,
    within: sandboxPath,
    path: sandboxPath,
    data: bytes,
    mode: z.number().int().min(0).max(0o777).optional(),
  }),
  z.object({ op: z.literal('file.list'), id: frameId, within: sandboxPath, path: sandboxPath }),
  z.object({ op: z.literal('file.stat'), id: frameId, within: sandboxPath, path: sandboxPath }),
  /** Removes a file, or a directory and everything in it; a path with nothing there is no error. */
  z.object({ op: z.literal('file.remove'), id: frameId, within: sandboxPath, path: sandboxPath }),
  /** Makes a symbolic link at `path` to `target` (which may lie anywhere: the link is not followed here). */
  z.object({
    op: z.literal('file.symlink'),
    id: frameId,
    within: sandboxPath,
    path: sandboxPath,
    target: sandboxPath,
  }),
  /**
   * Opens a gateway door: a loopback HTTP port in the sandbox for a program started before its thread
   * was known (a standby's coding agent). It refuses every request until aimed, then forwards each to
   * the Paddock API with the thread's token in place of the program's placeholder. Answered with its port.
   */
  z.object({ op: z.literal('door.open'), id: frameId }),
  z.object({
    op: z.literal('door.aim'),
    id: frameId,
    port: z.number().int().min(1).max(65_535),
    api_url: z.string().min(1).max(2000),
    token: z.string().min(1).max(2000),
  }),
  z.object({ op: z.literal('door.close'), id: frameId, port: z.number().int().min(1).max(65_535) }),
  z.object({ op: z.literal('shutdown') }),
]);
export type SupervisorRequest = z.infer<typeof supervisorRequestSchema>;

export const sandboxFileEntryTypes = ['file', 'directory', 'symlink', 'other'] as const;
export const sandboxFileEntrySchema = z.object({
  name: z.string(),
  type: z.enum(sandboxFileEntryTypes),
  size: z.number().int().nonnegative(),
});
export type SandboxFileEntry = z.infer<typeof sandboxFileEntrySchema>;

/** Why a request failed: a refusal of the path, or the system's error code (ENOENT, EACCES…). */
export const supervisorErrorSchema = z.object({ code: z.string().max(100), message: z.string().max(10_000) });
export type SupervisorError = z.infer<typeof supervisorErrorSchema>;

const answer = <T extends z.ZodRawShape>(shape: T) => z.object({ re: frameId, ...shape });

/** What a successful answer carries, by the request it answers. */
export const supervisorAnswerSchemas = {
  spawn: z.object({ pid: z.number().int().positive() }),
  'proc.alive': z.object({ alive: z.boolean() }),
  'run.begin': z.object({}),
  'run.end': z.object({}),
  'run.kill': z.object({ killed: z.number().int().nonnegative() }),
  'file.read': z.object({ data: bytes, size: z.number().int().nonnegative() }),
  'file.write': z.object({}),
  'file.list': z.object({ entries: z.array(sandboxFileEntrySchema), total: z.number().int().nonnegative() }),
  'file.stat': z.object({ type: z.enum(sandboxFileEntryTypes), size: z.number().int().nonnegative() }),
  'file.remove': z.object({}),
  'door.open': z.object({ port: z.number().int().min(1).max(65_535) }),
  'door.aim': z.object({}),
  'door.close': z.object({}),
  'file.symlink': z.object({}),
} as const;
export type SupervisorAnswers = {
  [K in keyof typeof supervisorAnswerSchemas]: z.infer<(typeof supervisorAnswerSchemas)[K]>;
};
/** The requests that are answered, and what each answers. */
export type AnsweredRequest = Extract<SupervisorRequest, { id: number }>;

export const supervisorFrameSchema = z.union([
  /** A request's answer: its result (checked against the request with `supervisorAnswerSchemas`), or why it failed. */
  answer({ ok: z.record(z.string(), z.unknown()) }),
  answer({ error: supervisorErrorSchema }),
  z.discriminatedUnion('ev', [
    /** Sent once, first: the supervisor's pid inside the sandbox. */
    z.object({ ev: z.literal('ready'), pid: z.number().int().positive() }),
    z.object({
      ev: z.literal('output'),
      proc: frameId,
      fd: z.union([z.literal(1), z.literal(2)]),
      data: bytes,
    }),
    /** A process ended (after its output, or a moment after its exit if something it left holds its pipes). */
    z.object({
      ev: z.literal('exit'),
      proc: frameId,
      code: z.number().int().nullable(),
      signal: z.string().max(20).nullable(),
    }),
    z.object({ ev: z.literal('log'), level: z.enum(['info', 'warn', 'error']), message: z.string() }),
  ]),
]);
export type SupervisorFrame = z.infer<typeof supervisorFrameSchema>;
export type SupervisorReport = Extract<SupervisorFrame, { ev: string }>;

/**
 * The first message on a link the supervisor dials out (a WebSocket to Paddock, from a pod with no
 * runner beside it): the token that proves which sandbox is calling. The host reads nothing else
 * from the connection before it accepts this, and a token is good for one link.
 */
export const supervisorHelloSchema = z.object({
  hello: z.literal('paddock-supervisor/1'),
  token: z.string().min(16).max(4096),
});
export type SupervisorHello = z.infer<typeof supervisorHelloSchema>;
