import { exitCodeOf, type SandboxHands } from '@paddock/harness';

export type EntrypointOutput = (stream: 'stdout' | 'stderr', text: string) => void;

/**
 * Runs the agent's start-up script in the sandbox (`bash -c`, in the workspace, with the thread's
 * environment); its failure is the agent's business, so it is only reported. Answers its exit code.
 * A script that starts a daemon (`server &`) exits while the daemon holds its output: the supervisor
 * reports the exit a moment later, and later output is dropped.
 */
export async function runEntrypoint(
  hands: SandboxHands,
  script: string,
  context: { env: Record<string, string>; workspaceDir: string },
  onOutput: EntrypointOutput | undefined,
): Promise<number> {
  let program: Awaited<ReturnType<SandboxHands['spawn']>>;
  try {
    program = await hands.spawn({
      argv: ['bash', '-c', script],
      env: context.env,
      cwd: context.workspaceDir,
    });
  } catch (error) {
    onOutput?.('stderr', `cannot start bash: ${(error as Error).message}\n`);
    return 127;
  }
  for (const stream of ['stdout', 'stderr'] as const) {
    program[stream].setEncoding('utf8');
    program[stream].on('data', (text: string) => onOutput?.(stream, text));
  }
  return exitCodeOf(await program.exited);
}
