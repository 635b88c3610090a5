import type { NetworkRecorder, SandboxHost } from '@paddock/core';
import type { ProgramCache } from '@paddock/harness';
import {
  detectProvider,
  type EgressSettings,
  Runner,
  type StandbyOptions,
  type ThreadModels,
  type Workspaces,
} from '@paddock/sandbox';
import type { Logger } from 'pino';
import { StartupError } from '../startup/config.ts';

export interface RunnerSetup {
  mode: 'auto' | 'bwrap' | 'process';
  stateDir: string;
  /** The server as this host reaches it: where the sandboxes' API proxy forwards to. */
  apiTarget: { host: string; port: number };
  /** Makes the thread workspaces, each owned by its sandbox's uid (shared with the server's uploads). */
  workspaces: Workspaces;
  /** Where the runner installs ACP programs; its sandboxes see it read-only. */
  programs?: ProgramCache;
  logger: Logger;
  /** Whether a provider on this runner is switched on: if not, its falling back to plain processes is only debug. */
  enabled?: boolean;
  /** How long a sandbox's connection waits for a server that is restarting (detached runners). */
  apiConnectRetryMs?: number;
  /**
   * The sandboxes kept booted for the next threads: how many and of which size
   * (`PADDOCK_STANDBY_SANDBOXES`, `PADDOCK_STANDBY_SIZE`), and the ACP programs each starts ahead of
   * its thread (`PADDOCK_STANDBY_HARNESSES`).
   */
  standby: StandbyOptions;
  /** What the sandboxes' egress proxies decide by besides each thread's policy; without it they reach nothing. */
  egress?: EgressSettings;
  /** The models Paddock's own loops call in this process (the model router); else the gateway over HTTP. */
  models?: ThreadModels;
}

/** A runner on the best provider this host offers (bubblewrap, else plain processes). */
export async function createRunner(options: RunnerSetup): Promise<{ runner: Runner; isolation: string }> {
  const log = (level: 'info' | 'warn' | 'error', message: string) =>
    options.logger[level]({ component: 'sandbox' }, message);
  const { provider, report } = await detectProvider({
    stateDir: options.stateDir,
    forceProcess: options.mode === 'process',
    harnessDir: options.programs?.root,
    log,
  });
  if (options.mode === 'bwrap' && report.kind !== 'bwrap') {
    throw new StartupError(`PADDOCK_SANDBOX=bwrap but bubblewrap cannot run here: ${report.reason}`);
  }
  if (report.reason)
    options.logger[options.enabled === false ? 'debug' : 'warn'](
      { reason: report.reason },
      'sandboxes run as plain processes',
    );
  const runner = new Runner({
    provider,
    stateDir: options.stateDir,
    apiTarget: options.apiTarget,
    apiConnectRetryMs: options.apiConnectRetryMs,
    standby: options.standby,
    workspaces: options.workspaces,
    programs: options.programs,
    egress: options.egress,
    models: options.models,
    log,
  });
  return { runner, isolation: `${report.isolation}; ${options.workspaces.describe()}` };
}

/**
 * The in-process runner behind core's SandboxHost seam: its sandboxes live and die with the server,
 * and so do its turns, which no other server adopts. It hosts every thread placed on it alike; the
 * connections its sandboxes make through their egress proxies go to `recordNetwork`.
 */
export function embeddedSandboxHost(
  runner: Runner,
  apiUrl: () => string,
  recordNetwork: NetworkRecorder,
): SandboxHost {
  return {
    adoptsTurns: false,
    place: () => {},
    runnerFor: () => undefined,
    isRunning: (threadId) => runner.isRunning(threadId),
    isBooting: (threadId) => runner.isBooting(threadId),
    liveThreadIds: () => runner.liveThreadIds(),
    canInterrupt: () => true,
    ensure: (threadId, ensure) =>
      runner.ensure(threadId, {
        ...ensure,
        env: { ...ensure.env, PADDOCK_API_URL: apiUrl() },
        onNetwork: (record) => recordNetwork(threadId, record),
      }),
    runTurn: (threadId, command, onEvent) =>
      runner.runTurn(threadId, command, (event) => {
        void onEvent(event);
      }),
    interrupt: (threadId, turnId) => runner.interrupt(threadId, turnId),
    steer: (threadId, turnId, messages) => runner.steer(threadId, turnId, messages),
    exec: (threadId, request) => runner.exec(threadId, request),
  };
}

/**
 * A sandbox host whose in-process runner (`embeddedSandboxHost`) comes up later (on the first boot,
 * or once its engine answers): until then nothing runs on it, and a boot brings it up (`start`) or
 * fails saying why it cannot. It answers for that runner what does not wait for it.
 */
export function deferredSandboxHost(options: {
  current: () => SandboxHost | undefined;
  start?: () => Promise<void>;
  whyNot: () => string;
}): SandboxHost {
  const ready = (): SandboxHost => {
    const host = options.current();
    if (!host) throw new Error(options.whyNot());
    return host;
  };
  return {
    adoptsTurns: false,
    place: () => {},
    runnerFor: () => undefined,
    isRunning: (threadId) => options.current()?.isRunning(threadId) ?? false,
    isBooting: (threadId) => options.current()?.isBooting(threadId) ?? false,
    liveThreadIds: () => options.current()?.liveThreadIds() ?? [],
    canInterrupt: () => true,
    async ensure(threadId, ensureOptions) {
      await options.start?.();
      return ready().ensure(threadId, ensureOptions);
    },
    runTurn: async (threadId, command, onEvent) => ready().runTurn(threadId, command, onEvent),
    interrupt: (threadId, turnId) => options.current()?.interrupt(threadId, turnId),
    steer: async (threadId, turnId, messages) =>
      (await options.current()?.steer(threadId, turnId, messages)) ?? false,
    exec: async (threadId, request) => ready().exec(threadId, request),
  };
}
