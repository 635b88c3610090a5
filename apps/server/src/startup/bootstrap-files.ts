import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { dataDirFailure } from './startup-errors.ts';

/**
 * D2: the first start keeps the admin's token (and generated password) in 0600 files, written
 * before the transaction that creates the admin commits: a start that fails after it (a busy port)
 * leaves both the admin and the files, one that fails before leaves neither.
 */
export function keepBootstrap(dataDir: string, created: { token: string; password?: string }): void {
  const keep = (name: string, value: string) => {
    // Whole or not at all: a file half-written by a crash would hold a wrong credential.
    const file = join(dataDir, name);
    try {
      writeFileSync(`${file}.tmp`, `${value}\n`, { mode: 0o600 });
      renameSync(`${file}.tmp`, file);
    } catch (error) {
      rmSync(`${file}.tmp`, { force: true });
      throw dataDirFailure(error, dataDir);
    }
  };
  keep('bootstrap-token', created.token);
  if (created.password) keep('admin-password', created.password);
}

/**
 * Says where the first start kept the admin's credentials. Their values are printed only to a
 * terminal: a log collector (stdout piped, a container's log) must not hold credentials.
 */
export function announceBootstrap(
  dataDir: string,
  created: { token: string; password?: string },
  logger: Logger,
): void {
  const tokenFile = join(dataDir, 'bootstrap-token');
  const passwordFile = join(dataDir, 'admin-password');
  const shown = process.stdout.isTTY === true;
  const lines = [
    shown
      ? `Bootstrap token (admin, scopes read,publish,admin): ${created.token}`
      : 'Bootstrap token (admin, scopes read,publish,admin): not printed (stdout is not a terminal)',
    `  saved to ${tokenFile}`,
  ];
  if (created.password)
    lines.push(
      shown
        ? `Admin password: ${created.password}`
        : 'Admin password: not printed (stdout is not a terminal)',
      `  saved to ${passwordFile}`,
    );
  process.stdout.write(`\n${lines.join('\n')}\n\n`);
  logger.info('bootstrap: created admin, organization and team "default"');
}
