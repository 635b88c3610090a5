import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** D4: the secrets key comes from PADDOCK_SECRET_KEY, else a key file generated once in the data dir. */
export function loadSecretKey(configured: string | undefined, dataDir: string): Buffer {
  if (configured) return Buffer.from(configured, configured.length === 64 ? 'hex' : 'base64');
  const file = join(dataDir, 'secret.key');
  try {
    return Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    const key = randomBytes(32);
    writeFileSync(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
    return key;
  }
}
