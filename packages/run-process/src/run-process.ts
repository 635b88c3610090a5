import { spawn } from 'node:child_process';
import { constants } from 'node:os';

export interface RunProcessOptions {
  cwd: string;
  env: Record<string, string>;
  signal?: AbortSignal;
  timeoutMs: number;
  /**
   * An open file the program reads as stdin; without it stdin is /dev/null. (Not a pipe: Node's are
   * sockets, and bash, seeing a socket as stdin, would take itself for a remote shell and read
   * ~/.bashrc.)
   */
  stdinFd?: number;
  onStdout(chunk: Buffer): void;
  onStderr(chunk: Buffer): void;
}

export interface ProcessRun {
  /** The exit code; 128 + n when signal n ended it; 124 (as `timeout(1)` answers) when it timed out. */
  exit_code: number;
  timed_out: boolean;
}

// After the process exits, background children may still hold the pipes open; do not wait on them.
const drainAfterExitMs = 200;
const timeoutExitCode = 124;

/**
 * Runs a program in its own process group. Abort and timeout kill the whole group, so nothing the
 * program started outlives it then; a program that ends on its own may leave background children
 * running, whose later output is not collected. Rejects when the program cannot start (ENOENT) or
 * on abort.
 */
export function runProcess(file: string, args: string[], options: RunProcessOptions): Promise<ProcessRun> {
  const { signal } = options;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Error('cancelled'));
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: [options.stdinFd ?? 'ignore', 'pipe', 'pipe'],
    });
    const stdout = child.stdout!;
    const stderr = child.stderr!;
    stdout.on('data', options.onStdout);
    stderr.on('data', options.onStderr);

    let settled = false;
    let timedOut = false;
    let drainTimer: NodeJS.Timeout | undefined;
    const killGroup = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // The group is already gone.
      }
    };
    const settle = (finish: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(drainTimer);
      signal?.removeEventListener('abort', onAbort);
      stdout.destroy();
      stderr.destroy();
      finish();
    };
    const onAbort = () => {
      killGroup();
      settle(() => reject(new Error('cancelled')));
    };
    const complete = () => {
      const { exitCode, signalCode } = child;
      const exit_code = timedOut
        ? timeoutExitCode
        : (exitCode ?? (signalCode ? 128 + (constants.signals[signalCode] ?? 0) : 1));
      settle(() => resolve({ exit_code, timed_out: timedOut }));
    };

    signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutMs);
    child.on('error', (error) => settle(() => reject(error)));
    child.on('exit', () => {
      drainTimer = setTimeout(complete, drainAfterExitMs);
    });
    child.on('close', complete);
  });
}
