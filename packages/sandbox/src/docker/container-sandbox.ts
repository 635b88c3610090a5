import type { Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { readLines, toNdjson } from '../ndjson.ts';
import type { RunnerCommand, SupervisorMessage } from '../protocol.ts';
import type { SandboxExit, SandboxProcess } from '../provider.ts';
import { demuxStream } from './demux.ts';
import type { DockerEngine } from './engine.ts';

export interface ContainerSandboxOptions {
  engine: DockerEngine;
  id: string;
  /** A created, not yet started container whose command is the supervisor. */
  containerId: string;
  bootTimeoutMs: number;
  onStderr?: (text: string) => void;
}

const stderrTailChars = 2000;

/**
 * Starts the container attached to its stdio and resolves once the supervisor inside has said
 * `ready`; rejects (after removing the container) if it never does.
 */
export async function startContainerSandbox(options: ContainerSandboxOptions): Promise<SandboxProcess> {
  const { engine, containerId } = options;
  let connection: Socket;
  try {
    connection = await engine.attach(containerId);
    await engine.start(containerId);
  } catch (error) {
    await engine.remove(containerId).catch(() => {});
    throw error;
  }
  const sandbox = new ContainerSandbox(options, connection);
  return sandbox.ready.then(
    () => sandbox,
    async (error: unknown) => {
      await sandbox.destroy();
      throw error;
    },
  );
}

/** A supervisor in a container, spoken to in NDJSON over the engine's attach connection. */
class ContainerSandbox implements SandboxProcess {
  readonly id: string;
  readonly exited: Promise<SandboxExit>;
  readonly ready: Promise<void>;
  pid = 0;
  readonly #engine: DockerEngine;
  readonly #containerId: string;
  readonly #connection: Socket;
  readonly #listeners = new Set<(message: SupervisorMessage) => void>();
  readonly #held: SupervisorMessage[] = [];
  #stderrTail = '';
  #destroying: Promise<void> | undefined;

  constructor(options: ContainerSandboxOptions, connection: Socket) {
    this.id = options.id;
    this.#engine = options.engine;
    this.#containerId = options.containerId;
    this.#connection = connection;
    connection.on('error', () => {});
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    demuxStream(connection, stdout, stderr);

    // The engine ends the attachment once the container has exited and its output is delivered.
    this.exited = new Promise((resolve) => {
      stdout.once('close', () => {
        this.#engine.inspect(this.#containerId).then(
          (state) => resolve({ code: state && !state.Running ? state.ExitCode : null, signal: null }),
          () => resolve({ code: null, signal: null }),
        );
      });
    });
    stdout.resume();

    stderr.setEncoding('utf8');
    stderr.on('data', (text: string) => {
      this.#stderrTail = (this.#stderrTail + text).slice(-stderrTailChars);
      options.onStderr?.(text);
    });

    this.ready = new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`sandbox ${this.id} did not become ready in ${options.bootTimeoutMs} ms`)),
        options.bootTimeoutMs,
      );
      void this.exited.then((exit) => {
        clearTimeout(timer);
        reject(
          new Error(`sandbox ${this.id} exited before ready (code ${exit.code}): ${this.#stderrTail.trim()}`),
        );
      });
      readLines(stdout, (line) => {
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

  send(command: RunnerCommand): void {
    const connection = this.#connection;
    if (connection.destroyed || !connection.writable) return;
    connection.write(toNdjson(command));
  }

  onMessage(listener: (message: SupervisorMessage) => void): () => void {
    this.#listeners.add(listener);
    for (const message of this.#held.splice(0)) listener(message);
    return () => this.#listeners.delete(listener);
  }

  destroy(): Promise<void> {
    this.#destroying ??= this.#destroy();
    return this.#destroying;
  }

  async #destroy(): Promise<void> {
    // The engine kills every process of the container (its cgroup) and removes its writable layer.
    await this.#engine.remove(this.#containerId).catch(() => {});
    this.#connection.destroy();
    await this.exited;
  }

  #deliver(message: SupervisorMessage): void {
    if (this.#listeners.size === 0) {
      this.#held.push(message);
      return;
    }
    for (const listener of this.#listeners) listener(message);
  }
}
