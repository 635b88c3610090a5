import type { NetworkRecorder, ProviderAvailability, SandboxHost } from '@paddock/core';
import type { ProgramCache } from '@paddock/harness';
import {
  createDockerProvider,
  DockerEngine,
  type EgressSettings,
  Runner,
  type ThreadModels,
  type Workspaces,
} from '@paddock/sandbox';
import type { Logger } from 'pino';
import type { SandboxBackend } from './backend.ts';
import { deferredSandboxHost, embeddedSandboxHost } from './embedded.ts';

export interface DockerSetup {
  /** `DOCKER_HOST`: the engine the containers run on, on this host. */
  dockerHost: string;
  image: string;
  stateDir: string;
  /** The server as this host reaches it: where the sandboxes' API proxy forwards to. */
  apiTarget: { host: string; port: number };
  /** The server's URL, known once it listens. */
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
  /** Whether the deployment config switches sandbox_b on: only then does its availability go above debug. */
  enabled: boolean;
  /** How often the engine and the image are looked for again. */
  probeEveryMs?: number;
}

/**
 * sandbox_b: an in-process runner whose provider is the Docker engine at `DOCKER_HOST`. The engine
 * and the base image are probed at start and every `probeEveryMs` after, so an engine started (or an
 * image built) later makes the provider available without a restart; the runner is made at the
 * first probe that finds both. Until the first probe is in, sandbox_b is unavailable ('not probed
 * yet'); a boot while the engine or the image is missing fails with the reason.
 */
export function startDockerSandboxes(setup: DockerSetup): SandboxBackend {
  const log = (level: 'info' | 'warn' | 'error', message: string) =>
    setup.logger[level]({ component: 'docker' }, message);
  const engine = new DockerEngine(setup.dockerHost);
  let runner: Runner | undefined;
  let host: SandboxHost | undefined;
  let state: ProviderAvailability = { available: false, reason: 'the Docker engine was not probed yet' };
  let closed = false;

  async function probe(): Promise<void> {
    const next = await look();
    if (next.available && !runner && !closed) {
      try {
        const provider = await createDockerProvider({
          engine,
          image: setup.image,
          stateDir: setup.stateDir,
          harnessDir: setup.programs?.root,
          log,
        });
        runner = new Runner({
          provider,
          stateDir: setup.stateDir,
          apiTarget: setup.apiTarget,
          workspaces: setup.workspaces,
          programs: setup.programs,
          egress: setup.egress,
          models: setup.models,
          log,
          // No standby container: it would hold a sandbox's memory on hosts that never run sandbox_b.
          standby: { size: 'L', count: 0 },
        });
        host = embeddedSandboxHost(runner, setup.apiUrl, setup.recordNetwork);
      } catch (error) {
        next.available = false;
        next.reason = `the Docker engine at ${engine.name} failed: ${(error as Error).message}`;
      }
    }
    if (next.available) next.isolation = runner!.provider.isolation;
    if (next.available !== state.available || next.reason !== state.reason) {
      const message = next.available
        ? `sandbox_b available: ${next.isolation}`
        : `sandbox_b unavailable: ${next.reason}`;
      setup.logger[!setup.enabled ? 'debug' : next.available ? 'info' : 'warn'](
        { component: 'docker' },
        message,
      );
    }
    state = next;
  }

  async function look(): Promise<ProviderAvailability> {
    try {
      await engine.ping();
    } catch (error) {
      return { available: false, reason: `no Docker engine at ${engine.name} (${(error as Error).message})` };
    }
    try {
      if (!(await engine.imageExists(setup.image))) {
        return {
          available: false,
          reason: `the Docker engine at ${engine.name} has no image ${setup.image}; build it with \`npm run docker-image\``,
        };
      }
    } catch (error) {
      return {
        available: false,
        reason: `the Docker engine at ${engine.name} failed: ${(error as Error).message}`,
      };
    }
    return { available: true };
  }

  // Not awaited: an engine slow to answer must not hold up the server's start.
  void probe().catch(() => {});
  const timer = setInterval(() => void probe().catch(() => {}), setup.probeEveryMs ?? 10_000);
  timer.unref();

  return {
    kinds: ['sandbox_b'],
    host: deferredSandboxHost({
      current: () => host,
      whyNot: () => `sandbox_b cannot run here: ${state.reason}`,
    }),
    availability: () => state,
    async shutdown() {
      closed = true;
      clearInterval(timer);
      await runner?.shutdown();
    },
  };
}
