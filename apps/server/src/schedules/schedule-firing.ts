import { fireDueSchedules, type Services } from '@paddock/core';
import type { Logger } from 'pino';

/**
 * Fires due schedules once at start (so a time missed while no server ran fires now, once) and
 * then every `pollMs`, never two passes at once on this node; the store's claim keeps nodes apart.
 */
export function startScheduleFiring(
  services: Services,
  pollMs: number,
  logger: Logger,
): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  const run = () => {
    running ??= fireDueSchedules(services)
      .then(() => undefined)
      .catch((error: unknown) => logger.error({ err: error }, 'firing schedules failed'))
      .finally(() => {
        running = undefined;
      });
  };
  const timer = setInterval(run, pollMs);
  timer.unref();
  run();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
