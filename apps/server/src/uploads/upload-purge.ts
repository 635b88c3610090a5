import { purgeUploads, type Services } from '@paddock/core';
import type { Logger } from 'pino';

/**
 * Runs the purge of lapsed upload bytes once at start and then on a timer, like the turn worker's
 * sweep: every quarter of the retention, at most once a minute, never two at once.
 */
export function startUploadPurge(services: Services, logger: Logger): { stop(): Promise<void> } {
  const intervalMs = Math.min(60_000, Math.max(50, Math.floor(services.uploads.retentionMs / 4)));
  let running: Promise<void> | undefined;
  const run = () => {
    running ??= purgeUploads({ services, nowMs: Date.now() })
      .then((purged) => {
        if (purged > 0) logger.info({ purged }, 'purged lapsed upload bytes');
      })
      .catch((error: unknown) => logger.error({ err: error }, 'purging uploads failed'))
      .finally(() => {
        running = undefined;
      });
  };
  const timer = setInterval(run, intervalMs);
  timer.unref();
  run();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
