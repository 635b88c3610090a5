import type { Readable, Writable } from 'node:stream';
import {
  type AnsweredRequest,
  maxSupervisorFrameChars,
  type ProcessSignal,
  type SandboxFileEntry,
  type SupervisorAnswers,
  type SupervisorError,
  type SupervisorFrame,
  type SupervisorReport,
  type SupervisorRequest,
  supervisorAnswerSchemas,
  supervisorFrameSchema,
} from '@paddock/protocol';
import { readLines } from '../read-lines.ts';
import { RemoteProcess } from './remote-process.ts';

/** A request the supervisor refused or failed: its code is the system's (ENOENT) or `path_refused`. */
export class SupervisorRequestError extends Error {
  readonly code: string;
  constructor(error: SupervisorError) {
    super(error.message);
    this.code = error.code;
  }
}

export interface SupervisorClientOptions {
  /** Where frames go to the supervisor. */
  input: Writable;
  /** Where its frames arrive. */
  output: Readable;
  onLog?: (level: 'info' | 'warn' | 'error', message: string) => void;
  /**
   * The supervisor sent something that is not a frame of the protocol: nothing more is read, and the
   * owner destroys the sandbox. (Nothing in the sandbox but the supervisor can write here.)
   */
  onProtocolError: (reason: string) => void;
}

export interface SpawnOptions {
  argv: string[];
  env: Record<string, string>;
  cwd: string;
  stdin?: boolean;
  /** A process the sandbox keeps across turns: no Stop kills it. */
  keep?: boolean;
}

/** An answered request without its id, which the client gives it. */
type RequestBody = AnsweredRequest extends infer R
  ? R extends AnsweredRequest
    ? Omit<R, 'id'>
    : never
  : never;

interface Pending {
  op: AnsweredRequest['op'];
  resolve(ok: unknown): void;
  reject(error: Error): void;
}

/**
 * The runner's end of a supervisor's link: requests answered by id, the processes it started by the
 * id the runner gave each. Every frame that arrives is checked against the protocol's schemas.
 */
export class SupervisorClient {
  /** The supervisor's pid in the sandbox, once it said it is ready. */
  readonly ready: Promise<number>;
  readonly #input: Writable;
  readonly #options: SupervisorClientOptions;
  readonly #pending = new Map<number, Pending>();
  readonly #processes = new Map<number, RemoteProcess>();
  readonly #ready = Promise.withResolvers<number>();
  /**
   * The pid of every process started, each the leader of a process group of its own (which lives on
   * while any process in it does): the process provider, whose pids are the host's, kills them all.
   */
  readonly started = new Set<number>();
  #next = 1;
  #closed: Error | undefined;
  #stopReading: () => void;

  constructor(options: SupervisorClientOptions) {
    this.#options = options;
    this.#input = options.input;
    this.#input.on('error', () => {});
    this.ready = this.#ready.promise;
    this.ready.catch(() => {});
    this.#stopReading = readLines(options.output, (line) => this.#receive(line), {
      maxLineChars: maxSupervisorFrameChars,
      onTooLong: () => this.#breakOff(`a frame longer than ${maxSupervisorFrameChars} characters`),
    });
    options.output.once('close', () => this.close(new Error('the supervisor is gone')));
  }

  /** The link is over: nothing asked now is answered. */
  get closed(): boolean {
    return this.#closed !== undefined;
  }

  request<R extends RequestBody>(request: R): Promise<SupervisorAnswers[R['op']]> {
    if (this.#closed) return Promise.reject(this.#closed);
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { op: request.op, resolve: resolve as (ok: unknown) => void, reject });
      this.#send({ ...request, id } as AnsweredRequest);
    });
  }

  /** Starts a program in the sandbox; rejects when it cannot start. */
  async spawn(options: SpawnOptions): Promise<RemoteProcess> {
    const proc = this.#next++;
    const process = new RemoteProcess(
      {
        writeStdin: (target, data, end) =>
          this.#send({ op: 'stdin', proc: target, data: data?.toString('base64'), end: end || undefined }),
        signal: (target, signal) => this.#send({ op: 'signal', proc: target, signal }),
        alive: async (target) => (await this.request({ op: 'proc.alive', proc: target })).alive,
      },
      proc,
    );
    this.#processes.set(proc, process);
    try {
      process.pid = (await this.request({ op: 'spawn', proc, ...options })).pid;
      this.started.add(process.pid);
    } catch (error) {
      this.#processes.delete(proc);
      throw error;
    }
    return process;
  }

  async readFile(within: string, path: string, maxBytes: number): Promise<{ data: Buffer; size: number }> {
    const { data, size } = await this.request({ op: 'file.read', within, path, max_bytes: maxBytes });
    return { data: Buffer.from(data, 'base64'), size };
  }

  async writeFile(within: string, path: string, data: Buffer | string, mode?: number): Promise<void> {
    const bytes = typeof data === 'string' ? Buffer.from(data) : data;
    await this.request({ op: 'file.write', within, path, data: bytes.toString('base64'), mode });
  }

  list(within: string, path: string): Promise<{ entries: SandboxFileEntry[]; total: number }> {
    return this.request({ op: 'file.list', within, path });
  }

  stat(within: string, path: string): Promise<SupervisorAnswers['file.stat']> {
    return this.request({ op: 'file.stat', within, path });
  }

  async remove(within: string, path: string): Promise<void> {
    await this.request({ op: 'file.remove', within, path });
  }

  async symlink(within: string, path: string, target: string): Promise<void> {
    await this.request({ op: 'file.symlink', within, path, target });
  }

  /** A gateway door in the sandbox (see the protocol's `door.open`); answers its port. */
  async openDoor(): Promise<number> {
    return (await this.request({ op: 'door.open' })).port;
  }

  async aimDoor(port: number, target: { apiUrl: string; token: string }): Promise<void> {
    await this.request({ op: 'door.aim', port, api_url: target.apiUrl, token: target.token });
  }

  async closeDoor(port: number): Promise<void> {
    await this.request({ op: 'door.close', port });
  }

  shutdown(): void {
    this.#send({ op: 'shutdown' });
  }

  /** The link is over: every pending request fails, every process counts as ended. */
  close(error: Error): void {
    if (this.#closed) return;
    this.#closed = error;
    this.#stopReading();
    this.#ready.reject(error);
    for (const pending of this.#pending.values()) pending.reject(error);
    this.#pending.clear();
    for (const process of this.#processes.values()) process.ended({ code: null, signal: null });
    this.#processes.clear();
  }

  #send(request: SupervisorRequest): void {
    if (this.#closed || this.#input.destroyed) return;
    this.#input.write(`${JSON.stringify(request)}\n`);
  }

  #receive(line: string): void {
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      this.#breakOff('a frame that is not JSON');
      return;
    }
    const parsed = supervisorFrameSchema.safeParse(json);
    if (!parsed.success) {
      this.#breakOff(`a malformed frame: ${parsed.error.issues[0]?.message}`);
      return;
    }
    const frame = parsed.data;
    if ('re' in frame) this.#answer(frame);
    else this.#report(frame);
  }

  #answer(frame: Extract<SupervisorFrame, { re: number }>): void {
    const pending = this.#pending.get(frame.re);
    if (!pending) {
      this.#breakOff(`an answer to no request (${frame.re})`);
      return;
    }
    this.#pending.delete(frame.re);
    if ('error' in frame) {
      pending.reject(new SupervisorRequestError(frame.error));
      return;
    }
    const ok = supervisorAnswerSchemas[pending.op].safeParse(frame.ok);
    if (ok.success) pending.resolve(ok.data);
    else {
      pending.reject(new Error(`the supervisor answered ${pending.op} with a malformed result`));
      this.#breakOff(`a malformed answer to ${pending.op}`);
    }
  }

  #report(frame: SupervisorReport): void {
    switch (frame.ev) {
      case 'ready':
        this.#ready.resolve(frame.pid);
        return;
      case 'output':
        this.#processes.get(frame.proc)?.output(frame.fd, Buffer.from(frame.data, 'base64'));
        return;
      case 'exit': {
        const process = this.#processes.get(frame.proc);
        this.#processes.delete(frame.proc);
        process?.ended({ code: frame.code, signal: frame.signal });
        return;
      }
      case 'log':
        this.#options.onLog?.(frame.level, frame.message.slice(0, 2000));
    }
  }

  #breakOff(reason: string): void {
    // The reason may quote what the supervisor sent: printable ASCII only, and short.
    const clean = reason.replace(/[^\x20-\x7e]/g, '?').slice(0, 200);
    this.close(new Error(`sandbox_protocol_error: ${clean}`));
    this.#options.onProtocolError(clean);
  }
}

export type { ProcessSignal };
