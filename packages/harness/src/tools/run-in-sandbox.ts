import { constants } from 'node:os';
import { finished } from 'node:stream/promises';
import type { SandboxHands } from '../sandbox-hands.ts';

export interface SandboxRun {
  /** The exit code; 128 + n when signal n ended it; 124 (as `timeout(1)` answers) when it timed out. */
  exit_code: number;
  timed_out: boolean;
}

export interface RunInSandboxOptions {
  argv: string[];
  env: Record<string, string>;
  cwd: string;
  /** Written to the program's stdin, then ended; without it the program reads /dev/null. */
  stdin?: string;
  /** Aborting it kills the program's group, and the run rejects with `cancelled`. */
  signal?: AbortSignal;
  timeoutMs: number;
  onStdout(chunk: Buffer): void;
  onStderr(chunk: Buffer): void;
}

/** What a shell answers for a program that ended: its code, or 128 + the signal that ended it. */
export function exitCodeOf(exit: { code: number | null; signal: string | null }): number {
  return exit.code ?? (exit.signal ? 128 + (constants.signals[exit.signal as NodeJS.Signals] ?? 0) : 1);
}

/**
 * Runs a program in the sandbox, in a process group of its own, to its end: the timeout and an
 * abort kill the whole group. A program that ends on its own may leave background children running
 * (the supervisor stops waiting for its output a moment after it exits). Rejects when the program
 * cannot start, and on abort.
 */
export async function runInSandbox(sandbox: SandboxHands, options: RunInSandboxOptions): Promise<SandboxRun> {
  const { signal } = options;
  if (signal?.aborted) throw new Error('cancelled');
  const program = await sandbox.spawn({
    argv: options.argv,
    env: options.env,
    cwd: options.cwd,
    stdin: options.stdin !== undefined,
  });
  program.stdout.on('data', options.onStdout);
  program.stderr.on('data', options.onStderr);
  if (options.stdin !== undefined) program.stdin.end(options.stdin);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    program.signal('SIGKILL');
  }, options.timeoutMs);
  const onAbort = () => program.signal('SIGKILL');
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const [exit] = await Promise.all([program.exited, finished(program.stdout), finished(program.stderr)]);
    if (signal?.aborted) throw new Error('cancelled');
    return { exit_code: timedOut ? 124 : exitCodeOf(exit), timed_out: timedOut };
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}
