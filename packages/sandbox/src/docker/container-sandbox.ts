import type { Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { toNdjson } from '@paddock/supervisor';
import type { RunnerCommand, SupervisorMessage } from '../protocol.ts';
import type { SandboxExit, SandboxProcess } from '../provider.ts';
import { readyOrDestroyed, SupervisorChannel, withProtocolError } from '../supervisor-channel.ts';
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
  return readyOrDestroyed(sandbox);
}

/** A supervisor in a container, spoken to in NDJSON over the engine's attach connection. */
class ContainerSandbox implements SandboxProcess {
  readonly id: string;
  readonly exited: Promise<SandboxExit>;
  readonly ready: Promise<void>;
  readonly #engine: DockerEngine;
  readonly #containerId: string;
  readonly #connection: Socket;
  readonly #channel: SupervisorChannel;
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
    const exited = new Promise<SandboxExit>((resolve) => {
      stdout.once('close', () => {
        this.#engine.inspect(this.#containerId).then(
          (state) => resolve({ code: state && !state.Running ? state.ExitCode : null, signal: null }),
          () => resolve({ code: null, signal: null }),
        );
      });
    });
    this.#channel = new SupervisorChannel({
      id: this.id,
      stdout,
      stderr,
      exited,
      bootTimeoutMs: options.bootTimeoutMs,
      onStderr: options.onStderr,
      onProtocolError: () => void this.destroy(),
    });
    this.exited = exited.then((exit) => withProtocolError(exit, this.#channel.protocolError));
    this.ready = this.#channel.ready;
  }

  get pid(): number {
    return this.#channel.pid;
  }

  send(command: RunnerCommand): void {
    const connection = this.#connection;
    if (connection.destroyed || !connection.writable) return;
    connection.write(toNdjson(command));
  }

  onMessage(listener: (message: SupervisorMessage) => void): () => void {
    return this.#channel.onMessage(listener);
  }

  breakOff(reason: string): void {
    this.#channel.breakOff(reason);
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
}
