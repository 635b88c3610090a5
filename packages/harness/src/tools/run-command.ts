import { constants } from 'node:os';
import { finished } from 'node:stream/promises';
import { createOutputTail } from '@paddock/run-process';
import type { SandboxHands } from '../sandbox-hands.ts';

export interface CommandResult {
  exit_code: number;
  output: string;
}

export interface RunCommandOptions {
  sandbox: SandboxHands;
  cwd: string;
  env: Record<string, string>;
  signal: AbortSignal;
  timeoutMs: number;
  outputLimit: number;
}

/** What a command answers when its time ran out, as `timeout(1)` does. */
const timeoutExitCode = 124;

/**
 * Runs `bash -c <command>` in the sandbox, in its own process group, with stdout and stderr merged.
 * Abort and timeout kill the whole group, so nothing the command started outlives it then; a command
 * that ends on its own may leave background children running (the supervisor stops waiting for its
 * output a moment after it exits). Rejects on abort, and when bash cannot start.
 */
export async function runCommand(command: string, options: RunCommandOptions): Promise<CommandResult> {
  const { signal } = options;
  if (signal.aborted) throw new Error('cancelled');
  const output = createOutputTail(options.outputLimit);
  const program = await options.sandbox.spawn({
    argv: ['bash', '-c', command],
    env: options.env,
    cwd: options.cwd,
  });
  program.stdout.on('data', output.push);
  program.stderr.on('data', output.push);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    program.signal('SIGKILL');
  }, options.timeoutMs);
  const onAbort = () => program.signal('SIGKILL');
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const [exit] = await Promise.all([program.exited, finished(program.stdout), finished(program.stderr)]);
    if (signal.aborted) throw new Error('cancelled');
    const exitCode = timedOut
      ? timeoutExitCode
      : (exit.code ?? (exit.signal ? 128 + (constants.signals[exit.signal as NodeJS.Signals] ?? 0) : 1));
    let text = output.text();
    if (timedOut) text += `\n[timed out after ${options.timeoutMs} ms; the process group was killed]`;
    return { exit_code: exitCode, output: text };
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
  }
}
