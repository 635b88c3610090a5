import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { send } from './send.ts';

/** How long output may trail the script's exit before we call it done. */
const drainMs = 200;

/** Runs the agent's setup script; its failure is the agent's business, so it is only reported. */
export function runEntrypoint(script: string, cwd: string, env: Record<string, string>): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let settled = false;
    for (const stream of ['stdout', 'stderr'] as const) {
      child[stream].setEncoding('utf8');
      child[stream].on('data', (text: string) => {
        if (!settled) send({ type: 'entrypoint.output', stream, text });
      });
    }
    const finish = (exitCode: number): void => {
      if (settled) return;
      settled = true;
      send({ type: 'entrypoint.exit', exit_code: exitCode });
      resolve();
    };
    child.on('error', (error) => {
      send({ type: 'entrypoint.output', stream: 'stderr', text: `cannot start bash: ${error.message}\n` });
      finish(127);
    });
    // A script that starts a daemon (`server &`) exits while the daemon still holds its stdout, so
    // 'close' may never come: after a short drain the exit counts and later output is dropped.
    child.on('exit', (code, signal) => {
      const exitCode = code ?? 128 + (signal ? constants.signals[signal] : 0);
      const timer = setTimeout(() => finish(exitCode), drainMs);
      child.once('close', () => {
        clearTimeout(timer);
        finish(exitCode);
      });
    });
  });
}
