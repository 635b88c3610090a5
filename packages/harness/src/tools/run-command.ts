import { createOutputTail, runProcess } from '@paddock/run-process';

export interface CommandResult {
  exit_code: number;
  output: string;
}

export interface RunCommandOptions {
  cwd: string;
  env: Record<string, string>;
  signal: AbortSignal;
  timeoutMs: number;
  outputLimit: number;
}

/**
 * Runs `bash -c <command>` in its own process group, with stdout and stderr merged. Abort and
 * timeout kill the whole group, so nothing the command started outlives it.
 */
export async function runCommand(command: string, options: RunCommandOptions): Promise<CommandResult> {
  const output = createOutputTail(options.outputLimit);
  const run = await runProcess('bash', ['-c', command], {
    ...options,
    onStdout: output.push,
    onStderr: output.push,
  });
  let text = output.text();
  if (run.timed_out) text += `\n[timed out after ${options.timeoutMs} ms; the process group was killed]`;
  return { exit_code: run.exit_code, output: text };
}
