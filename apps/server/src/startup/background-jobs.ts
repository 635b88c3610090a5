import { isAdoptingHost, queueStrandedInputs, type Services, type TurnExecutor } from '@paddock/core';
import { timestamp } from '@paddock/protocol';
import { createTurnWorker, type ServedTurnQueue } from '@paddock/runtime';
import { runnerElsewhere } from '@paddock/store';
import type { Logger } from 'pino';
import { startLiveSandboxRenewal } from '../sandbox-hosts/live-sandbox-renewal.ts';
import { startScheduleFiring } from '../schedules/schedule-firing.ts';
import { startUploadPurge } from '../uploads/upload-purge.ts';
import type { Config } from './config.ts';
import { type DeploymentConfig, orgLimits } from './deployment-config.ts';
import type { MachinePresence } from './machine-presence.ts';

export interface BackgroundJobs {
  /** Starts claiming turns and the timers; called once the server listens. */
  start(): void;
  /** Stops them, the turns first (see `TurnWorker.stop`). */
  stop(): Promise<void>;
}

/**
 * The server's background work: the turn worker, made here (it serves the turn queue from now on,
 * so a runner's held turns can be adopted as soon as a runner can connect) and started with the
 * purge of lapsed uploads, the renewal of live sandboxes and the firing of due schedules once the
 * server listens.
 */
export function backgroundJobs(
  config: Config,
  parts: {
    deployment: DeploymentConfig;
    services: Services;
    executor: TurnExecutor;
    turnQueue: ServedTurnQueue;
    logger: Logger;
    /** Where the other nodes reach this one (known once it listens). */
    nodeUrl: () => string;
    /** This node's machines, told to the others while the jobs run (on PostgreSQL). */
    presence: MachinePresence;
  },
): BackgroundJobs {
  const { services, executor, logger } = parts;
  // On PostgreSQL other nodes may share the database: each thread's turns run on the node that
  // reaches its workspace's machine (see `startMachinePresence`). SQLite serves one node.
  const manyNodes = services.store.dialect === 'postgres';
  const worker = createTurnWorker({
    store: services.store,
    queue: parts.turnQueue,
    execute: executor.execute,
    resume: executor.resume,
    settleExpired: executor.settleExpired,
    settleLost: executor.settleLost,
    leaseTtlMs: config.PADDOCK_LEASE_TTL_MS,
    node: services.nodeId,
    threadHomes: manyNodes,
    takesNewThreads: config.PADDOCK_RUNNER === 'detached' ? () => hasRunnerFor(services) : undefined,
    adoptionWindowMs: config.PADDOCK_ADOPTION_WINDOW_MS,
    concurrency: config.PADDOCK_MAX_CONCURRENT_TURNS,
    runningTurnLimit: orgLimits(parts.deployment.limits, 'running_turns'),
    repair: () => queueStrandedInputs(services),
    pollMs: config.PADDOCK_SWEEP_MS,
    log: logger,
  });
  let timers: { stop(): Promise<void> }[] = [];
  return {
    start() {
      if (manyNodes)
        parts.presence.start(services, {
          nodeUrl: parts.nodeUrl,
          intervalMs: config.PADDOCK_PRESENCE_MS,
          logger,
        });
      worker.start();
      timers = [
        startUploadPurge(services, logger),
        startLiveSandboxRenewal(services, logger),
        startScheduleFiring(services, config.PADDOCK_SCHEDULE_POLL_MS, logger),
      ];
    },
    async stop() {
      await worker.stop();
      for (const timer of timers) await timer.stop();
      await parts.presence.stop();
    },
  };
}

/**
 * Whether a node whose sandboxes run on detached runners can take a thread no node holds yet: it
 * has a runner connected, or no other node has one (then the turn waits for a runner here, as on one
 * node). Else it leaves the thread to a node with a runner.
 */
async function hasRunnerFor(services: Services): Promise<boolean> {
  const { sandboxes, store, nodeId } = services;
  if (isAdoptingHost(sandboxes) && sandboxes.connectedRunners().some((runner) => !runner.selfHosted))
    return true;
  return !(await runnerElsewhere(store.db, nodeId, timestamp()));
}
