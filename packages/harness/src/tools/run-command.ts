import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { createOutputTail } from './output-tail.ts';

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

// After bash exits, background children may still hold the pipes open; do not wait on them.
const drainAfterExitMs = 200;
const timeoutExitCode = 124;

/**
 * Runs `bash -c <command>` in its own process group, with stdout and stderr merged. Abort and
 * timeout kill the whole group, so nothing the command started outlives it.
 */
export function runCommand(command: string, options: RunCommandOptions): Promise<CommandResult> {
  const { signal } = options;
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Error('cancelled'));
    const child = spawn('bash', ['-c', command], {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output = createOutputTail(options.outputLimit);
    child.stdout.on('data', output.push);
    child.stderr.on('data', output.push);

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
      signal.removeEventListener('abort', onAbort);
      child.stdout.destroy();
      child.stderr.destroy();
      finish();
    };
    const onAbort = () => {
      killGroup();
      settle(() => reject(new Error('cancelled')));
    };
    const complete = () => {
      const { exitCode, signalCode } = child;
      let exit_code = exitCode ?? (signalCode ? 128 + (constants.signals[signalCode] ?? 0) : 1);
      let text = output.text();
      if (timedOut) {
        exit_code = timeoutExitCode;
        text += `\n[timed out after ${options.timeoutMs} ms; the process group was killed]`;
      }
      settle(() => resolve({ exit_code, output: text }));
    };

    signal.addEventListener('abort', onAbort, { once: true });
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
