import { type ChildProcess, spawn } from 'node:child_process';
import type { Socket } from 'node:net';
import { hostCommandsBinary, hostCommandsSourceDir } from '@paddock/host-commands';
import { buildGoProgram } from '../build-go-program.ts';
import { readLines } from '../read-lines.ts';

/** The commands a runner runs as root on its host (packages/host-commands). */
export type HostCommand = 'mount' | 'umount' | 'mkfs.ext4';

export interface HostCommandResult {
  code: number | null;
  stderr: string;
}

interface Pending {
  resolve(result: HostCommandResult): void;
  reject(error: Error): void;
}

/**
 * The process that runs this process's host commands, started on first use and again after it
 * ended. Its pipes hold this process open only while a command is under way.
 */
class HostCommands {
  #child: ChildProcess | undefined;
  #starting: Promise<ChildProcess> | undefined;
  readonly #pending = new Map<number, Pending>();
  #next = 1;

  run(command: HostCommand, args: string[], timeoutMs: number): Promise<HostCommandResult> {
    const id = this.#next++;
    return new Promise<HostCommandResult>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#hold(true);
      this.#started().then(
        (started) => started.stdin!.write(`${JSON.stringify({ id, command, args, timeoutMs })}\n`),
        (error: Error) => {
          this.#pending.delete(id);
          reject(error);
        },
      );
    });
  }

  /** The process, started on first use (its program built first, once) and again after it ended. */
  #started(): Promise<ChildProcess> {
    if (this.#child) return Promise.resolve(this.#child);
    this.#starting ??= this.#start().finally(() => {
      this.#starting = undefined;
    });
    return this.#starting;
  }

  async #start(): Promise<ChildProcess> {
    const program = await buildGoProgram(hostCommandsSourceDir, hostCommandsBinary);
    const child = spawn(program, [], {
      stdio: ['pipe', 'pipe', 'inherit'],
      // Its own group, as the commands it starts: a signal to this process's group leaves it be.
      detached: true,
    });
    this.#child = child;
    child.stdin!.on('error', () => {});
    readLines(child.stdout!, (line) => this.#answered(line));
    child.once('close', () => {
      if (this.#child === child) this.#child = undefined;
      for (const pending of this.#pending.values())
        pending.reject(new Error('the host command process ended'));
      this.#pending.clear();
    });
    child.unref();
    this.#hold(this.#pending.size > 0);
    return child;
  }

  #answered(line: string): void {
    const { id, code, stderr, error } = JSON.parse(line) as {
      id: number;
      error?: string;
    } & HostCommandResult;
    const pending = this.#pending.get(id);
    if (!pending) return;
    this.#pending.delete(id);
    if (this.#pending.size === 0) this.#hold(false);
    if (error !== undefined) pending.reject(new Error(error));
    else pending.resolve({ code, stderr });
  }

  /** Keeps this process alive for the answers while commands are under way, and only then. */
  #hold(busy: boolean): void {
    for (const pipe of [this.#child?.stdin, this.#child?.stdout] as (Socket | undefined)[]) {
      if (busy) pipe?.ref();
      else pipe?.unref();
    }
  }
}

const hostCommands = new HostCommands();

/** Runs a host command as this process's user (root) in a group of its own; kills it after `timeoutMs`. */
export function runHostCommand(
  command: HostCommand,
  args: string[],
  timeoutMs = 30_000,
): Promise<HostCommandResult> {
  return hostCommands.run(command, args, timeoutMs);
}
