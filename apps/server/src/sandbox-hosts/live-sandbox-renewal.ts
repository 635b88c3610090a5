import { renewLiveSandboxes, type Services } from '@paddock/core';
import type { Logger } from 'pino';

/**
 * Vouches for the sandboxes this node hosts every third of a lease, as the turn worker renews its
 * leases: they keep counting against their organizations' limits while they run, and stop counting
 * one lease after this node dies.
 */
export function startLiveSandboxRenewal(services: Services, logger: Logger): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  const run = () => {
    running ??= renewLiveSandboxes(services)
      .catch((error: unknown) => logger.error({ err: error }, 'renewing live sandboxes failed'))
      .finally(() => {
        running = undefined;
      });
  };
  const timer = setInterval(run, Math.max(50, Math.floor(services.sandboxLimits.leaseMs / 3)));
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
