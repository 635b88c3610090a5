import { localKinds, type SandboxBackend } from './backend.ts';
import { RunnerHub, type RunnerHubOptions } from './runner-hub/runner-hub.ts';

/**
 * The local provider on the deployment's detached runners (`PADDOCK_RUNNER=detached`): the sandboxes
 * live in the runners' own processes, so turns outlive a server restart. A detached runner on this
 * host, as root, mounts shared folders like the in-process one.
 */
export function detachedRunnersBackend(options: RunnerHubOptions): SandboxBackend & { host: RunnerHub } {
  const hub = new RunnerHub(options);
  return {
    kinds: localKinds,
    host: hub,
    availability: () => ({ available: true, isolation: 'detached runners', sharedFolders: true }),
    // The runners keep their sandboxes and reconnect to the next server.
    shutdown: async () => hub.close(),
  };
}
