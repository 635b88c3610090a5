import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { SupervisorRequest } from '@paddock/protocol';
import type { FrameWriter } from './frame-writer.ts';
import type { RunProcesses } from './run-processes.ts';
import type { SandboxUser } from './sandbox-user.ts';

type Spawn = Extract<SupervisorRequest, { op: 'spawn' }>;

/** After a program exits, what it left in the background may hold its pipes: its exit counts after this. */
const drainAfterExitMs = 200;

/**
 * The processes the runner started, by the id it gave each: their output relayed as `output`
 * frames, their end as one `exit`, their stdin written as the runner says, their group signalled.
 * Each runs in a process group of its own, as the sandbox's user.
 */
export class Processes {
  readonly #live = new Map<number, ChildProcess>();
  readonly #frames: FrameWriter;
  readonly #user: SandboxUser;
  readonly #runs: RunProcesses;

  constructor(frames: FrameWriter, user: SandboxUser, runs: RunProcesses) {
    this.#frames = frames;
    this.#user = user;
    this.#runs = runs;
    frames.whenDrained(() => {
      for (const child of this.#live.values()) {
        child.stdout?.resume();
        child.stderr?.resume();
      }
    });
  }

  /** Starts the program; answers its pid, or throws why it could not start. */
  start(request: Spawn): Promise<number> {
    const { proc } = request;
    if (this.#live.has(proc)) return Promise.reject(new Error(`process ${proc} exists already`));
    const [file, ...args] = request.argv;
    const { uid } = this.#user;
    const child = this.#user.asRoot(() =>
      spawn(file!, args, {
        cwd: request.cwd,
        env: request.env,
        // Its own group: a Stop or a signal reaches everything it started.
        detached: true,
        // Not a socket as stdin unless asked: bash, seeing one, takes itself for a remote shell.
        stdio: [request.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
        ...(uid === undefined ? {} : { uid, gid: uid }),
      }),
    );
    return new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('spawn', () => {
        child.off('error', reject);
        child.on('error', () => {});
        this.#live.set(proc, child);
        if (request.keep) this.#runs.keep(child.pid!);
        this.#relay(proc, child);
        resolve(child.pid!);
      });
    });
  }

  /**
   * Whether the process runs: not exiting (its memory, and with it its command line, already
   * released), not a zombie, not gone; its `exit` may not be sent yet.
   */
  alive(proc: number): boolean {
    const pid = this.#live.get(proc)?.pid;
    if (pid === undefined) return false;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return stat[stat.lastIndexOf(')') + 2] !== 'Z' && readFileSync(`/proc/${pid}/cmdline`).length > 0;
    } catch {
      return false;
    }
  }

  write(proc: number, data: string | undefined, end: boolean | undefined): void {
    const stdin = this.#live.get(proc)?.stdin;
    if (!stdin || stdin.destroyed) return;
    if (data) stdin.write(Buffer.from(data, 'base64'));
    if (end) stdin.end();
  }

  signal(proc: number, signal: NodeJS.Signals): void {
    const pid = this.#live.get(proc)?.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, signal);
    } catch {
      // The group is gone already.
    }
  }

  /** The sandbox stops: every group the runner started ends. */
  killAll(): void {
    for (const proc of this.#live.keys()) this.signal(proc, 'SIGKILL');
  }

  #relay(proc: number, child: ChildProcess): void {
    child.stdin?.on('error', () => {});
    let reported = false;
    const report = (): void => {
      if (reported) return;
      reported = true;
      this.#live.delete(proc);
      this.#runs.release(child.pid!);
      child.stdout?.destroy();
      child.stderr?.destroy();
      this.#frames.send({ ev: 'exit', proc, code: child.exitCode, signal: child.signalCode });
    };
    for (const fd of [1, 2] as const) {
      const stream = fd === 1 ? child.stdout! : child.stderr!;
      stream.on('data', (data: Buffer) => {
        if (reported) return;
        this.#frames.send({ ev: 'output', proc, fd, data: data.toString('base64') });
        if (this.#frames.full) stream.pause();
      });
    }
    child.once('exit', () => setTimeout(report, drainAfterExitMs).unref());
    child.once('close', report);
  }
}
