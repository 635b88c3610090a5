import { queueStrandedInputs, type Services, type TurnExecutor } from '@paddock/core';
import { createTurnWorker, type ServedTurnQueue } from '@paddock/runtime';
import type { Logger } from 'pino';
import { startLiveSandboxRenewal } from '../sandbox-hosts/live-sandbox-renewal.ts';
import { startScheduleFiring } from '../schedules/schedule-firing.ts';
import { startUploadPurge } from '../uploads/upload-purge.ts';
import type { Config } from './config.ts';
import { type DeploymentConfig, orgLimits } from './deployment-config.ts';

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
  },
): BackgroundJobs {
  const { services, executor, logger } = parts;
  const worker = createTurnWorker({
    store: services.store,
    queue: parts.turnQueue,
    execute: executor.execute,
    resume: executor.resume,
    settleExpired: executor.settleExpired,
    settleLost: executor.settleLost,
    leaseTtlMs: config.PADDOCK_LEASE_TTL_MS,
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
    },
  };
}
