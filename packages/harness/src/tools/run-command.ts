import { createOutputTail } from '@paddock/run-process';
import type { SandboxHands } from '../sandbox-hands.ts';
import { runInSandbox } from './run-in-sandbox.ts';

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

/**
 * Runs `bash -c <command>` in the sandbox, in its own process group, with stdout and stderr merged
 * and only the tail kept. Abort and timeout kill the whole group (see `runInSandbox`).
 */
export async function runCommand(command: string, options: RunCommandOptions): Promise<CommandResult> {
  const output = createOutputTail(options.outputLimit);
  const run = await runInSandbox(options.sandbox, {
    argv: ['bash', '-c', command],
    env: options.env,
    cwd: options.cwd,
    signal: options.signal,
    timeoutMs: options.timeoutMs,
    onStdout: output.push,
    onStderr: output.push,
  });
  let text = output.text();
  if (run.timed_out) text += `\n[timed out after ${options.timeoutMs} ms; the process group was killed]`;
  return { exit_code: run.exit_code, output: text };
}
