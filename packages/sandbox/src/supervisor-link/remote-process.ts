import { PassThrough, Writable } from 'node:stream';
import type { ProcessSignal } from '@paddock/protocol';

/** How a process in a sandbox ended. */
export interface RemoteExit {
  code: number | null;
  signal: string | null;
}

/** What the process needs of the link it lives on. */
export interface ProcessLink {
  writeStdin(proc: number, data: Buffer | undefined, end: boolean): void;
  signal(proc: number, signal: ProcessSignal): void;
  alive(proc: number): Promise<boolean>;
}

/**
 * A process the supervisor started in a sandbox, as the runner holds it: its stdio as streams, its
 * end, and signals to its process group. What a client of a program's protocol (ACP, MCP) speaks
 * over, as over a child process of its own.
 */
export class RemoteProcess {
  readonly proc: number;
  /** Known once the supervisor answers the spawn. */
  pid = 0;
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  /** Writes go to the program's stdin (when it was started with one). */
  readonly stdin: Writable;
  readonly exited: Promise<RemoteExit>;
  #exit: RemoteExit | undefined;
  readonly #settle: (exit: RemoteExit) => void;
  readonly #link: ProcessLink;

  constructor(link: ProcessLink, proc: number) {
    this.#link = link;
    this.proc = proc;
    const { promise, resolve } = Promise.withResolvers<RemoteExit>();
    this.exited = promise;
    this.#settle = resolve;
    this.stdin = new Writable({
      write: (chunk: Buffer, _encoding, done) => {
        if (this.#exit === undefined) link.writeStdin(proc, chunk, false);
        done();
      },
      final: (done) => {
        if (this.#exit === undefined) link.writeStdin(proc, undefined, true);
        done();
      },
    });
  }

  /** The exit, once it is known. */
  get exit(): RemoteExit | undefined {
    return this.#exit;
  }

  /** Whether it still runs, asked of the supervisor: false even before its exit arrives. */
  async alive(): Promise<boolean> {
    if (this.#exit !== undefined) return false;
    return this.#link.alive(this.proc).catch(() => false);
  }

  signal(signal: ProcessSignal): void {
    if (this.#exit === undefined) this.#link.signal(this.proc, signal);
  }

  /** The supervisor's `output` for this process. */
  output(fd: 1 | 2, data: Buffer): void {
    (fd === 1 ? this.stdout : this.stderr).write(data);
  }

  /**
   * The supervisor's `exit`, or the link's end (no code, no signal). `exited` settles a turn of the
   * event loop later: what the program wrote before it ended reaches the streams' listeners first.
   */
  ended(exit: RemoteExit): void {
    if (this.#exit !== undefined) return;
    this.#exit = exit;
    this.stdout.end();
    this.stderr.end();
    this.stdin.destroy();
    setImmediate(() => this.#settle(exit));
  }
}
