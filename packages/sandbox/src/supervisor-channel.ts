import type { Readable } from 'node:stream';
import { readLines } from '@paddock/supervisor';
import { parseFrame } from './link/frames.ts';
import type { SupervisorMessage } from './protocol.ts';
import type { SandboxExit } from './provider.ts';
import { maxSupervisorLineChars, supervisorMessageSchema } from './supervisor-frames.ts';

const stderrTailChars = 2000;

/**
 * The runner's side of a supervisor's output, whatever carries it (a child's pipes, a container's
 * attach stream): its NDJSON messages, each parsed with its schema and held until someone listens;
 * `ready` once it says so (or a rejection naming the last of its stderr when it exits first or takes
 * too long).
 *
 * The supervisor is as trusted as the agent's code (it runs as the sandbox's uid), so a line that is
 * not a message, or is longer than `maxSupervisorLineChars`, breaks the channel off: nothing more is
 * delivered, and `onProtocolError` destroys the sandbox. Skipping the line instead could leave a turn
 * waiting for ever on a result that was malformed.
 */
export class SupervisorChannel {
  readonly ready: Promise<void>;
  /** The supervisor's pid in its own namespace, from its `ready`. */
  pid = 0;
  /** Why the channel was broken off (a short account, never the line's content). */
  protocolError: string | undefined;
  readonly #listeners = new Set<(message: SupervisorMessage) => void>();
  readonly #held: SupervisorMessage[] = [];
  readonly #onProtocolError: (reason: string) => void;
  #stopReading: () => void = () => {};
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
    /** Called once when the supervisor breaks the protocol: the owner destroys the sandbox. */
    onProtocolError: (reason: string) => void;
  }) {
    this.#onProtocolError = options.onProtocolError;
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
      this.#stopReading = readLines(
        options.stdout,
        (line) => {
          const parsed = parseFrame(supervisorMessageSchema, line);
          if ('error' in parsed) return this.breakOff(`malformed message: ${parsed.error}`);
          // Only an exec's result is still unchecked: its shape depends on the request (`ThreadSandbox`).
          const message = parsed.message as SupervisorMessage;
          if (message.type === 'ready') {
            if (this.pid !== 0) return this.breakOff('ready: sent twice');
            this.pid = message.pid;
            clearTimeout(timer);
            resolve();
            return;
          }
          this.#deliver(message);
        },
        {
          maxLineChars: maxSupervisorLineChars,
          onTooLong: () => this.breakOff(`a line longer than ${maxSupervisorLineChars} characters`),
        },
      );
    });
  }

  /**
   * Ends the channel because the supervisor broke the protocol (here, or in a message its reader
   * checked further, such as an exec's result): nothing more is delivered, `ready` rejects if it is
   * still pending, and the owner is told to destroy the sandbox.
   */
  breakOff(reason: string): void {
    if (this.protocolError !== undefined) return;
    // The reason may quote a name the sandbox chose: printable ASCII only, and short.
    this.protocolError = reason.replace(/[^\x20-\x7e]/g, '?').slice(0, 200);
    this.#stopReading();
    this.#held.length = 0;
    this.#listeners.clear();
    this.#fail(new Error(`sandbox_protocol_error: ${this.protocolError}`));
    this.#onProtocolError(this.protocolError);
  }

  /** Rejects `ready` (if it is still pending) with this error: the process could not even start. */
  fail(error: Error): void {
    this.#fail(error);
  }

  onMessage(listener: (message: SupervisorMessage) => void): () => void {
    if (this.protocolError !== undefined) return () => {};
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

/** A sandbox's exit, naming the protocol error it was destroyed for, if any. */
export function withProtocolError(exit: SandboxExit, protocolError: string | undefined): SandboxExit {
  return protocolError === undefined ? exit : { ...exit, protocolError };
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
