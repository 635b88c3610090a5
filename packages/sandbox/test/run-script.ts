import type { SandboxProcess } from '../src/provider.ts';

export interface ScriptRun {
  stdout: string;
  stderr: string;
  exitCode: number;
}

/** Runs a bash script in the sandbox through the supervisor's `entrypoint` command. */
export function runScript(sandbox: SandboxProcess, script: string): Promise<ScriptRun> {
  return new Promise((resolve) => {
    const run: ScriptRun = { stdout: '', stderr: '', exitCode: -1 };
    const stop = sandbox.onMessage((message) => {
      if (message.type === 'entrypoint.output') run[message.stream] += message.text;
      if (message.type === 'entrypoint.exit') {
        stop();
        run.exitCode = message.exit_code;
        resolve(run);
      }
    });
    sandbox.send({ type: 'entrypoint', script });
  });
}
