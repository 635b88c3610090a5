import { type Config, ConfigError, parseConfig, StartupError } from './config.ts';

/**
 * A failure the user can fix ends start-up with one line on stderr, without a stack: exit 2 for a
 * bad setting, 1 for the rest (a busy port, …). Any other error is a bug and is thrown with its stack.
 */
function fail(error: unknown): never {
  if (!(error instanceof StartupError)) throw error;
  process.stderr.write(`paddock: ${error.message}\n`);
  process.exit(error instanceof ConfigError ? 2 : 1);
}

/** Runs one of the `paddock` program's commands with the settings of the environment. */
export async function runCommand(command: (config: Config) => Promise<void>): Promise<void> {
  let config: Config;
  try {
    config = parseConfig(process.env);
  } catch (error) {
    fail(error);
  }
  try {
    await command(config);
  } catch (error) {
    fail(error);
  }
}
