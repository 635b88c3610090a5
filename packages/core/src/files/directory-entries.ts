import type { BigIntStats } from 'node:fs';
import { type FileHandle, lstat, readdir } from 'node:fs/promises';
import { entryThrough } from './workspace-path.ts';

/**
 * An open directory's entries, sorted by name, each with its lstat (a symlink is described, not
 * followed), read through the descriptor. An entry gone since the directory was read is left out:
 * the sandbox may be writing while we read.
 */
export async function readEntries(directory: FileHandle): Promise<[string, BigIntStats][]> {
  const names = (await readdir(entryThrough(directory, ''))).sort(byName);
  const entries: [string, BigIntStats][] = [];
  for (const name of names) {
    const stats = await lstat(entryThrough(directory, name), { bigint: true }).catch(() => undefined);
    if (stats) entries.push([name, stats]);
  }
  return entries;
}

/** Code point order: the same on every host, whatever its locale. */
function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
