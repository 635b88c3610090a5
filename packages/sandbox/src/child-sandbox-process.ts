import type { ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import type { SandboxExit, SandboxProcess } from './provider.ts';
import { readyOrDestroyed, SupervisorBoot } from './supervisor-link/supervisor-boot.ts';
import type { SupervisorClient } from './supervisor-link/supervisor-client.ts';

export interface ChildSandboxOptions {
  id: string;
  /** Spawned with piped stdio and `detached`, so its pid is also its process group. */
  child: ChildProcess;
  bootTimeoutMs: number;
  onStderr?: (text: string) => void;
  /**
   * Runs just before the process group is killed, while the supervisor's children are still its
   * children; it has the supervisor's client, which knows the groups it started.
   */
  beforeKill?: (pid: number, supervisor: SupervisorClient) => void;
  /** Removes whatever outlives the child's process group (cgroups) and per-boot state. */
  cleanup: () => Promise<void>;
  /** Freezes or thaws everything inside (the provider's freezer cgroup), when the provider can. */
  setFrozen?: (frozen: boolean) => Promise<boolean>;
  /** Shows a host directory at `/shared`, when the provider has shared folders. */
  attachShared?: (hostDir: string) => Promise<void>;
  /**
   * Where the supervisor's frames travel when not on the child's stdin and stdout: a micro-VM's
   * control port, while the child is QEMU (whose stdout and stderr are then diagnostics).
   */
  channel?: { input: Writable; output: Readable };
}

const outputDrainMs = 200;

/** Wraps a spawned supervisor; resolves once it has said `ready`, rejects (after cleaning up) if it never does. */
export function startChildSandbox(options: ChildSandboxOptions): Promise<SandboxProcess> {
  const sandbox = new ChildSandboxProcess(options);
  return readyOrDestroyed(sandbox, sandbox.ready);
}

class ChildSandboxProcess implements SandboxProcess {
  readonly id: string;
  readonly exited: Promise<SandboxExit>;
  readonly ready: Promise<number>;
  readonly supervisor: SupervisorClient;
  readonly setFrozen: ((frozen: boolean) => Promise<boolean>) | undefined;
  readonly attachShared: ((hostDir: string) => Promise<void>) | undefined;
  readonly #child: ChildProcess;
  readonly #boot: SupervisorBoot;
  readonly #beforeKill: ChildSandboxOptions['beforeKill'];
  readonly #cleanup: () => Promise<void>;
  #destroying: Promise<void> | undefined;

  constructor(options: ChildSandboxOptions) {
    this.id = options.id;
    this.#child = options.child;
    this.#beforeKill = options.beforeKill;
    this.#cleanup = options.cleanup;
    this.setFrozen = options.setFrozen;
    this.attachShared = options.attachShared;
    const child = options.child;
    const input = options.channel?.input ?? child.stdin;
    const output = options.channel?.output ?? child.stdout;
    if (!input || !output || !child.stderr) throw new Error('supervisor stdio must be piped');

    const exited = new Promise<SandboxExit>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) {
        resolve({ code: child.exitCode, signal: child.signalCode });
      }
      // What the supervisor wrote last (a turn's result) may still sit in the pipe at 'exit': let the
      // output drain first, but not wait on a straggler that inherited stdout.
      child.once('exit', (code, signal) => {
        if (output.closed) return resolve({ code, signal });
        const timer = setTimeout(() => resolve({ code, signal }), outputDrainMs);
        output.once('close', () => {
          clearTimeout(timer);
          resolve({ code, signal });
        });
      });
      child.once('error', () => resolve({ code: null, signal: null }));
    });
    this.#boot = new SupervisorBoot({
      id: this.id,
      input,
      output,
      // With a separate channel, the child's stdout is diagnostics too (QEMU's).
      stderr: options.channel && child.stdout ? [child.stderr, child.stdout] : [child.stderr],
      exited,
      bootTimeoutMs: options.bootTimeoutMs,
      onStderr: options.onStderr,
      onProtocolError: () => void this.destroy(),
    });
    this.supervisor = this.#boot.client;
    this.exited = this.#boot.exited;
    child.once('error', (error) => this.supervisor.close(error));
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
    // A frozen process cannot die until it is thawed.
    await this.setFrozen?.(false);
    const pid = this.#child.pid;
    if (pid !== undefined) {
      this.#beforeKill?.(pid, this.supervisor);
      // The group outlives its leader: a supervisor that already exited may have left children in it.
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        this.#child.kill('SIGKILL');
      }
      await this.exited;
    }
    await this.#cleanup();
  }
}
