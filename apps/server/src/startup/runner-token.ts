import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The shared secret detached runners authenticate with: PADDOCK_RUNNER_TOKEN, else a file the server
 * generates once in its data dir (0600), which a runner on the same host and data dir reads.
 */
export function loadRunnerToken(configured: string | undefined, dataDir: string, create: boolean): string {
  if (configured) return configured;
  const file = join(dataDir, 'runner-token');
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || !create) {
      throw new Error(`no PADDOCK_RUNNER_TOKEN and no readable ${file}: ${(error as Error).message}`);
    }
    const token = randomBytes(32).toString('base64url');
    writeFileSync(file, `${token}\n`, { mode: 0o600, flag: 'wx' });
    return token;
  }
}
