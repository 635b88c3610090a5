import type { Logger } from 'pino';

/**
 * Keeps a serving process up when an error escapes every handler: a promise rejected with no one
 * to catch it, or an exception thrown out of a callback. Either is logged with its stack and the
 * server goes on serving, instead of every user's requests, streams and turns dying with it
 * because one peer (a self-hosted runner, a client) found a path nobody handled.
 *
 * After an uncaught exception the state of whatever code threw is unknown (a half-done update of
 * its own data); Node's default is to exit. We keep serving anyway (issue 10): the store is
 * transactional, turns run under leases that a sweep settles, and the log says loudly
 * (`level: fatal`) that something must be fixed. Each such error is a bug to fix where it arose.
 */
export function keepServingOnErrors(logger: Logger, target: NodeJS.EventEmitter = process): void {
  target.on('unhandledRejection', (reason: unknown) => {
    logger.error({ err: reason }, 'unhandled promise rejection; still serving');
  });
  target.on('uncaughtException', (error: Error, origin: string) => {
    logger.fatal(
      { err: error, origin },
      'uncaught exception; still serving, in a state that may be inconsistent',
    );
  });
}
