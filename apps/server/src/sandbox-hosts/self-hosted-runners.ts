import type { SandboxBackend } from './backend.ts';
import { RunnerHub, type RunnerHubOptions } from './runner-hub/runner-hub.ts';

/**
 * sandbox_e: runners users start on their own machines, each with its agent's token and serving only
 * that agent's threads. They can always connect; whether one is there is known only per agent, at a
 * boot.
 */
export function selfHostedRunnersBackend(
  options: Omit<RunnerHubOptions, 'selfHosted'>,
): SandboxBackend & { host: RunnerHub } {
  const hub = new RunnerHub({ ...options, selfHosted: true });
  return {
    kinds: ['sandbox_e'],
    host: hub,
    availability: () => ({ available: true, isolation: 'self-hosted runners' }),
    shutdown: async () => hub.close(),
  };
}
