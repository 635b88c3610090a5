import { join } from 'node:path';
import type { NetworkRecorder, ProviderAvailability, SandboxHost } from '@paddock/core';
import type { ProgramCache } from '@paddock/harness';
import { type MachineKind, machineKinds } from '@paddock/protocol';
import type { TurnQueue } from '@paddock/runtime';
import type { EgressSettings, StandbyAgent, ThreadModels, Workspaces } from '@paddock/sandbox';
import type { Store } from '@paddock/store';
import type { Logger } from 'pino';
import type { SandboxBackend } from '../sandbox-hosts/backend.ts';
import { detachedRunnersBackend } from '../sandbox-hosts/detached-runners.ts';
import { startDockerSandboxes } from '../sandbox-hosts/docker.ts';
import { heldTurns } from '../sandbox-hosts/held-turns.ts';
import { localRunnerBackend } from '../sandbox-hosts/local-runner.ts';
import { microVmSandboxHost } from '../sandbox-hosts/micro-vm.ts';
import type { MicroVmCheck } from '../sandbox-hosts/micro-vm-check.ts';
import { routedSandboxHost } from '../sandbox-hosts/routed.ts';
import type { RunnerHub } from '../sandbox-hosts/runner-hub/runner-hub.ts';
import { selfHostedRunnersBackend } from '../sandbox-hosts/self-hosted-runners.ts';
import type { Config } from './config.ts';
import type { DeploymentConfig } from './deployment-config.ts';
import type { ServerAddress } from './server-address.ts';

export interface SandboxBackends {
  /** What core sees: each thread on its provider's backend (see routed.ts). */
  host: SandboxHost;
  /** Which providers this host can run now, and why not: each from its backend. */
  availability(): Record<MachineKind, ProviderAvailability>;
  /** The hubs of the runners' endpoint: the deployment's detached runners (when it has them), the self-hosted. */
  hubs: { detached?: RunnerHub; selfHosted: RunnerHub };
  /** Ends every backend, in the list's order. */
  shutdown(): Promise<void>;
}

/**
 * Builds every sandbox backend of the deployment, one entry each: self-hosted runners, the local
 * provider's (in this process, or on detached runners), Docker, micro-VMs. Each provider has exactly
 * one backend.
 */
export async function startSandboxBackends(
  config: Config,
  parts: {
    deployment: DeploymentConfig;
    /** Where this node's runners install ACP programs (see harness-programs.ts). */
    programs: ProgramCache;
    /** The programs the local runner's standby sandboxes start ahead (`PADDOCK_STANDBY_HARNESSES`). */
    standbyAgents: StandbyAgent[];
    logger: Logger;
    store: Store;
    workspaces: Workspaces;
    address: ServerAddress;
    turnQueue: TurnQueue;
    microVmCheck: MicroVmCheck;
    /** What this node's sandboxes' egress proxies decide by besides each thread's policy. */
    egress: EgressSettings;
    /** Stores the connections every backend's sandboxes make through their egress proxies. */
    recordNetwork: NetworkRecorder;
    /** The models the loops of this node's own runners call, in process. */
    models: ThreadModels;
    /** A runner connected to this node, or left it. */
    runnersChanged: () => void;
  },
): Promise<SandboxBackends> {
  const { logger, workspaces, address } = parts;
  // A provider the deployment config leaves off says why it cannot run at debug only.
  const enabled = (...kinds: MachineKind[]) =>
    kinds.some((kind) => parts.deployment.providers[kind]?.enabled);
  const hubOptions = {
    logger,
    ...heldTurns(parts.store, parts.turnQueue),
    onNetwork: parts.recordNetwork,
    onRunners: parts.runnersChanged,
  };
  const network = { egress: parts.egress, recordNetwork: parts.recordNetwork, models: parts.models };
  const detached =
    config.PADDOCK_RUNNER === 'detached'
      ? detachedRunnersBackend({ ...hubOptions, timings: { lostAfterMs: config.PADDOCK_ADOPTION_WINDOW_MS } })
      : undefined;
  const selfHosted = selfHostedRunnersBackend({
    ...hubOptions,
    timings: {
      lostAfterMs: config.PADDOCK_ADOPTION_WINDOW_MS,
      waitForRunnerMs: config.PADDOCK_SELF_HOSTED_WAIT_MS,
    },
  });
  const backends: SandboxBackend[] = [
    selfHosted,
    detached ??
      (await localRunnerBackend({
        mode: config.PADDOCK_SANDBOX,
        stateDir: join(config.dataDir, 'sandboxes'),
        apiTarget: address.target,
        apiUrl: address.url,
        workspaces,
        programs: parts.programs,
        logger,
        ...network,
        enabled: enabled('sandbox_a', 'sandbox_c', 'sandbox_d'),
        standby: {
          count: config.PADDOCK_STANDBY_SANDBOXES,
          size: config.PADDOCK_STANDBY_SIZE,
          agents: parts.standbyAgents,
        },
      })),
    // sandbox_b: containers on the Docker engine at DOCKER_HOST, hosted by this process in every mode.
    startDockerSandboxes({
      dockerHost: config.DOCKER_HOST,
      image: config.PADDOCK_DOCKER_IMAGE,
      stateDir: join(config.dataDir, 'sandboxes-docker'),
      apiTarget: address.target,
      apiUrl: address.url,
      workspaces,
      programs: parts.programs,
      logger,
      ...network,
      enabled: enabled('sandbox_b'),
    }),
    microVmSandboxHost({
      check: parts.microVmCheck,
      stateDir: join(config.dataDir, 'microvms'),
      apiTarget: address.target,
      apiUrl: address.url,
      workspaces,
      programs: parts.programs,
      logger,
      ...network,
      detached: detached !== undefined,
    }),
  ];
  const backendOf = Object.fromEntries(
    machineKinds.map((kind) => {
      const hosting = backends.filter((backend) => backend.kinds.includes(kind));
      if (hosting.length !== 1) throw new Error(`${kind} is hosted by ${hosting.length} sandbox backends`);
      return [kind, hosting[0]!];
    }),
  ) as Record<MachineKind, SandboxBackend>;
  return {
    host: routedSandboxHost(backends),
    availability: () =>
      Object.fromEntries(machineKinds.map((kind) => [kind, backendOf[kind].availability()])) as Record<
        MachineKind,
        ProviderAvailability
      >,
    hubs: { detached: detached?.host, selfHosted: selfHosted.host },
    async shutdown() {
      for (const backend of backends) await backend.shutdown();
    },
  };
}
