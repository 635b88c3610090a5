import type { Readable } from 'node:stream';
import { readLines } from './ndjson.ts';
import type { SupervisorMessage } from './protocol.ts';
import type { SandboxExit } from './provider.ts';

const stderrTailChars = 2000;

/**
 * The runner's side of a supervisor's output, whatever carries it (a child's pipes, a container's
 * attach stream): its NDJSON messages, held until someone listens; `ready` once it says so (or a
 * rejection naming the last of its stderr when it exits first or takes too long).
 */
export class SupervisorChannel {
  readonly ready: Promise<void>;
  /** The supervisor's pid in its own namespace, from its `ready`. */
  pid = 0;
  readonly #listeners = new Set<(message: SupervisorMessage) => void>();
  readonly #held: SupervisorMessage[] = [];
  #stderrTail = '';
  #fail: (error: Error) => void = () => {};

  constructor(options: {
    id: string;
    /** Where the supervisor's NDJSON arrives. */
    stdout: Readable;
    /** What it (or what hosts it, e.g. QEMU) writes besides: diagnostics, the last of which a failed boot names. */
    stderr: Readable | Readable[];
    exited: Promise<SandboxExit>;
    bootTimeoutMs: number;
    onStderr?: (text: string) => void;
  }) {
    for (const stream of [options.stderr].flat()) {
      stream.setEncoding('utf8');
      stream.on('data', (text: string) => {
        this.#stderrTail = (this.#stderrTail + text).slice(-stderrTailChars);
        options.onStderr?.(text);
      });
    }
    this.ready = new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`sandbox ${options.id} did not become ready in ${options.bootTimeoutMs} ms`)),
        options.bootTimeoutMs,
      );
      this.#fail = (error) => {
        clearTimeout(timer);
        reject(error);
      };
      void options.exited.then((exit) =>
        this.#fail(
          new Error(
            `sandbox ${options.id} exited before ready (code ${exit.code}, signal ${exit.signal}): ${this.#stderrTail.trim()}`,
          ),
        ),
      );
      readLines(options.stdout, (line) => {
        let message: SupervisorMessage;
        try {
          message = JSON.parse(line) as SupervisorMessage;
        } catch {
          options.onStderr?.(`unparsable supervisor output: ${line}\n`);
          return;
        }
        if (message.type === 'ready') {
          this.pid = message.pid;
          clearTimeout(timer);
          resolve();
          return;
        }
        this.#deliver(message);
      });
    });
  }

  /** Rejects `ready` (if it is still pending) with this error: the process could not even start. */
  fail(error: Error): void {
    this.#fail(error);
  }

  onMessage(listener: (message: SupervisorMessage) => void): () => void {
    this.#listeners.add(listener);
    for (const message of this.#held.splice(0)) listener(message);
    return () => this.#listeners.delete(listener);
  }

  #deliver(message: SupervisorMessage): void {
    if (this.#listeners.size === 0) {
      this.#held.push(message);
      return;
    }
    for (const listener of this.#listeners) listener(message);
  }
}

/** The sandbox once its supervisor is ready; destroyed (nothing left behind) when it never is. */
export function readyOrDestroyed<S extends { ready: Promise<void>; destroy(): Promise<void> }>(
  sandbox: S,
): Promise<S> {
  return sandbox.ready.then(
    () => sandbox,
    async (error: unknown) => {
      await sandbox.destroy();
      throw error;
    },
  );
}
