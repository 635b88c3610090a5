import type { Readable, Writable } from 'node:stream';
import type { SandboxExit } from '../provider.ts';
import { SupervisorClient } from './supervisor-client.ts';

const stderrTailChars = 2000;

export interface SupervisorBootOptions {
  id: string;
  /** Where frames go to the supervisor, and where its frames arrive. */
  input: Writable;
  output: Readable;
  /** What it (or what hosts it, e.g. QEMU) writes besides: diagnostics, the last of which a failed boot names. */
  stderr: Readable[];
  exited: Promise<{ code: number | null; signal: string | null }>;
  bootTimeoutMs: number;
  onStderr?: (text: string) => void;
  /** The supervisor broke the protocol: the owner destroys the sandbox. */
  onProtocolError: () => void;
}

/**
 * A supervisor's link as a boot sees it: the client, `ready` once the supervisor says so (or a
 * rejection naming the last of its stderr when it exits first or takes too long), and its exit,
 * naming the protocol error it was destroyed for, if any.
 */
export class SupervisorBoot {
  readonly client: SupervisorClient;
  readonly ready: Promise<number>;
  readonly exited: Promise<SandboxExit>;
  pid = 0;
  #protocolError: string | undefined;
  #stderrTail = '';

  constructor(options: SupervisorBootOptions) {
    for (const stream of options.stderr) {
      stream.setEncoding('utf8');
      stream.on('data', (text: string) => {
        this.#stderrTail = (this.#stderrTail + text).slice(-stderrTailChars);
        options.onStderr?.(text);
      });
    }
    this.client = new SupervisorClient({
      input: options.input,
      output: options.output,
      // What the supervisor says of itself (a door that did not open) goes where its stderr goes.
      onLog: (level, message) => options.onStderr?.(`${level}: ${message}\n`),
      onProtocolError: (reason) => {
        this.#protocolError = reason;
        options.onProtocolError();
      },
    });
    this.exited = options.exited.then((exit) =>
      this.#protocolError === undefined ? exit : { ...exit, protocolError: this.#protocolError },
    );
    void this.exited.then(() => this.client.close(new Error('the sandbox is gone')));
    this.ready = new Promise<number>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`sandbox ${options.id} did not become ready in ${options.bootTimeoutMs} ms`)),
        options.bootTimeoutMs,
      );
      void options.exited.then((exit) => {
        clearTimeout(timer);
        reject(
          new Error(
            `sandbox ${options.id} exited before ready (code ${exit.code}, signal ${exit.signal}): ${this.#stderrTail.trim()}`,
          ),
        );
      });
      this.client.ready.then(
        (pid) => {
          clearTimeout(timer);
          this.pid = pid;
          resolve(pid);
        },
        (error: Error) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });
    this.ready.catch(() => {});
  }
}

/** The sandbox once its supervisor is ready; destroyed (nothing left behind) when it never is. */
export function readyOrDestroyed<S extends { destroy(): Promise<void> }>(
  sandbox: S,
  ready: Promise<unknown>,
): Promise<S> {
  return ready.then(
    () => sandbox,
    async (error: unknown) => {
      await sandbox.destroy();
      throw error;
    },
  );
}
