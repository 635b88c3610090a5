import { ConfigError, parseConfig } from './config.ts';
import { runDockerImage } from './docker-image-main.ts';
import { startPaddock } from './paddock.ts';
import { keepServingOnErrors } from './process-guard.ts';
import { runRunner } from './runner-main.ts';

let config: ReturnType<typeof parseConfig>;
try {
  config = parseConfig(process.env);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`paddock: ${error.message}\n`);
  process.exit(2);
}

try {
  if (process.argv[2] === 'runner') await runRunner(config);
  else if (process.argv[2] === 'docker-image') await runDockerImage(config, process.argv.slice(3));
  else await serve(config);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`paddock: ${error.message}\n`);
  process.exit(2);
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
}
