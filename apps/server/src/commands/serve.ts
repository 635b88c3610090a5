import type { Config } from '../startup/config.ts';
import { startPaddock } from '../startup/paddock.ts';
import { keepServingOnErrors } from '../startup/process-guard.ts';

/** `paddock`: the server, until a signal stops it cleanly. */
export async function serve(config: Config): Promise<void> {
  const paddock = await startPaddock(config);
  // From here on an error no handler caught is logged and the server keeps serving (process-guard.ts).
  keepServingOnErrors(paddock.logger);

  let stopping = false;
  async function shutdown(signal: string): Promise<void> {
    if (stopping) return;
    stopping = true;
    paddock.logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 15_000);
    force.unref();
    await paddock.close();
    paddock.logger.info('stopped');
    process.exit(0);
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  // The terminal it ran in closed: stop as cleanly (sandboxes and their mounts go with it).
  process.on('SIGHUP', () => void shutdown('SIGHUP'));
}
