import type { Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import type { SandboxExit, SandboxProcess } from '../provider.ts';
import { readyOrDestroyed, SupervisorBoot } from '../supervisor-link/supervisor-boot.ts';
import type { SupervisorClient } from '../supervisor-link/supervisor-client.ts';
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
  return readyOrDestroyed(sandbox, sandbox.ready);
}

/** A supervisor in a container, spoken to over the engine's attach connection. */
class ContainerSandbox implements SandboxProcess {
  readonly id: string;
  readonly exited: Promise<SandboxExit>;
  readonly ready: Promise<number>;
  readonly supervisor: SupervisorClient;
  readonly #engine: DockerEngine;
  readonly #containerId: string;
  readonly #connection: Socket;
  readonly #boot: SupervisorBoot;
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
    this.#boot = new SupervisorBoot({
      id: this.id,
      input: connection,
      output: stdout,
      stderr: [stderr],
      exited,
      bootTimeoutMs: options.bootTimeoutMs,
      onStderr: options.onStderr,
      onProtocolError: () => void this.destroy(),
    });
    this.supervisor = this.#boot.client;
    this.exited = this.#boot.exited;
    this.ready = this.#boot.ready;
  }

  get pid(): number {
    return this.#boot.pid;
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
