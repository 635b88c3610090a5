import type { NetworkRecorder, SandboxHost } from '@paddock/core';
import type { ProgramCache } from '@paddock/harness';
import {
  type ApiTarget,
  createMicroVmProvider,
  type EgressSettings,
  Runner,
  type ThreadModels,
  type Workspaces,
} from '@paddock/sandbox';
import type { Logger } from 'pino';
import type { SandboxBackend } from './backend.ts';
import { deferredSandboxHost, embeddedSandboxHost } from './embedded.ts';
import type { MicroVmCheck } from './micro-vm-check.ts';

export interface MicroVmHostSetup {
  check: MicroVmCheck;
  stateDir: string;
  apiTarget: ApiTarget;
  apiUrl: () => string;
  /** Makes the thread workspaces, each owned by its sandbox's uid (shared with the server's uploads). */
  workspaces: Workspaces;
  /** Where the runner installs ACP programs; its sandboxes see it read-only. */
  programs?: ProgramCache;
  logger: Logger;
  /** What the sandboxes' egress proxies decide by besides each thread's policy; without it they reach nothing. */
  egress?: EgressSettings;
  /** The models Paddock's own loops call in this process (the model router); else the gateway over HTTP. */
  models?: ThreadModels;
  recordNetwork: NetworkRecorder;
  /** The deployment's runners are detached (`PADDOCK_RUNNER=detached`): no micro-VM runs here then. */
  detached: boolean;
}

const inProcessOnly = 'micro-VMs run with the in-process runner only (PADDOCK_RUNNER=embedded)';

/**
 * sandbox_f's sandboxes: an in-process runner on the micro-VM provider, made at the first boot
 * (agent create admits sandbox_f only once the check said yes). No standbys: a booted guest holds
 * its memory, and micro-VMs are rare enough to boot on demand. A deployment on detached runners has
 * none: sandbox_f is unavailable there, and a boot fails saying why.
 */
export function microVmSandboxHost(setup: MicroVmHostSetup): SandboxBackend {
  if (setup.detached)
    return {
      kinds: ['sandbox_f'],
      host: deferredSandboxHost({
        current: () => undefined,
        whyNot: () => `sandbox_f cannot run here: ${inProcessOnly}`,
      }),
      availability: () => ({ available: false, reason: inProcessOnly }),
      shutdown: () => setup.check.settled,
    };
  let runner: Promise<Runner> | undefined;
  let host: SandboxHost | undefined;
  const log = (level: 'info' | 'warn' | 'error', message: string) =>
    setup.logger[level]({ component: 'microvm' }, message);
  const start = (): Promise<Runner> => {
    runner ??= (async () => {
      const vmHost = setup.check.host();
      if (!vmHost) throw new Error(`sandbox_f cannot run here: ${setup.check.availability().reason}`);
      const provider = await createMicroVmProvider({
        host: vmHost,
        stateDir: `${setup.stateDir}/provider`,
        harnessDir: setup.programs?.root,
      });
      const started = new Runner({
        provider,
        stateDir: setup.stateDir,
        apiTarget: setup.apiTarget,
        workspaces: setup.workspaces,
        programs: setup.programs,
        egress: setup.egress,
        models: setup.models,
        standby: { size: 'L', count: 0 },
        log,
      });
      host = embeddedSandboxHost(started, setup.apiUrl, setup.recordNetwork);
      return started;
    })();
    runner.catch(() => {
      runner = undefined;
    });
    return runner;
  };
  return {
    kinds: ['sandbox_f'],
    // Every call but `ensure` comes after a boot, so the runner exists by then.
    host: deferredSandboxHost({
      current: () => host,
      start: async () => {
        await start();
      },
      whyNot: () => 'the thread has no running micro-VM',
    }),
    availability: () => setup.check.availability(),
    async shutdown() {
      const started = await runner?.catch(() => undefined);
      await started?.shutdown();
      await setup.check.settled;
    },
  };
}
