import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * This server's identity as the holder of its own sandboxes' tokens: kept in the data dir, so the
 * process that starts again on it after a crash knows which tokens died with its predecessor.
 */
export function loadNodeId(dataDir: string): string {
  const file = join(dataDir, 'node-id');
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    const id = randomUUID();
    writeFileSync(file, `${id}\n`, { mode: 0o600, flag: 'wx' });
    return id;
  }
}
