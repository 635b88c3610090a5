import type { NetworkRecorder } from '@paddock/core';
import { localKinds, type SandboxBackend } from './backend.ts';
import { createRunner, embeddedSandboxHost, type RunnerSetup } from './embedded.ts';

/**
 * The local provider on a runner in this process, on the best isolation this host offers (bubblewrap,
 * else plain processes): its sandboxes live and die with the server. Shared folders where the
 * provider can mount them (bubblewrap as root).
 */
export async function localRunnerBackend(
  setup: RunnerSetup & {
    /** The server's URL, known once it listens. */
    apiUrl: () => string;
    recordNetwork: NetworkRecorder;
  },
): Promise<SandboxBackend> {
  const { runner, isolation } = await createRunner(setup);
  return {
    kinds: localKinds,
    host: embeddedSandboxHost(runner, setup.apiUrl, setup.recordNetwork),
    availability: () => ({ available: true, isolation, sharedFolders: runner.provider.sharedFolders }),
    shutdown: () => runner.shutdown(),
  };
}
