import { runDockerImage } from './commands/docker-image.ts';
import { runHarnesses } from './commands/harnesses.ts';
import { runRunner } from './commands/runner.ts';
import { ConfigError, parseConfig, StartupError } from './startup/config.ts';
import { startPaddock } from './startup/paddock.ts';
import { keepServingOnErrors } from './startup/process-guard.ts';

/**
 * A failure the user can fix ends start-up with one line on stderr, without a stack: exit 2 for a
 * bad setting, 1 for the rest (a busy port, …). Any other error is a bug and is thrown with its stack.
 */
function fail(error: unknown): never {
  if (!(error instanceof StartupError)) throw error;
  process.stderr.write(`paddock: ${error.message}\n`);
  process.exit(error instanceof ConfigError ? 2 : 1);
}

let config: ReturnType<typeof parseConfig>;
try {
  config = parseConfig(process.env);
} catch (error) {
  fail(error);
}

try {
  if (process.argv[2] === 'runner') await runRunner(config);
  else if (process.argv[2] === 'docker-image') await runDockerImage(config, process.argv.slice(3));
  else if (process.argv[2] === 'harnesses') await runHarnesses(config, process.argv.slice(3));
  else await serve(config);
} catch (error) {
  fail(error);
}

async function serve(config: ReturnType<typeof parseConfig>): Promise<void> {
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
