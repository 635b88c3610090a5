import { exitCodeOf } from '@paddock/harness';
import type { SandboxProcess } from '../src/provider.ts';

export interface ScriptRun {
  stdout: string;
  stderr: string;
  exitCode: number;
}

/** The environment each sandbox's scripts run with, as the runner gives its thread's processes. */
const environments = new WeakMap<SandboxProcess, Record<string, string>>();

/** What the sandbox's processes run with from now on (a thread's environment, as the provider completes it). */
export function configure(sandbox: SandboxProcess, env: Record<string, string>): void {
  environments.set(sandbox, env);
}

/** Runs a bash script in the sandbox through its supervisor, in its workspace, as a turn's shell would. */
export async function runScript(sandbox: SandboxProcess, script: string): Promise<ScriptRun> {
  const env = environments.get(sandbox) ?? { PATH: '/usr/bin:/bin' };
  const program = await sandbox.supervisor.spawn({
    argv: ['bash', '-c', script],
    env,
    cwd: env.PADDOCK_WORKSPACE ?? '/workspace',
  });
  const run: ScriptRun = { stdout: '', stderr: '', exitCode: -1 };
  program.stdout.on('data', (chunk: Buffer) => {
    run.stdout += chunk.toString();
  });
  program.stderr.on('data', (chunk: Buffer) => {
    run.stderr += chunk.toString();
  });
  const exit = await program.exited;
  run.exitCode = exitCodeOf(exit);
  return run;
}
