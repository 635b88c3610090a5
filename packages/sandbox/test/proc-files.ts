import { readFileSync } from 'node:fs';

/** The non-empty lines of a small kernel file (cgroup.procs), or none when it is gone. */
export function readLinesOf(path: string): string[] {
  try {
    return readFileSync(path, 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '');
  } catch {
    return [];
  }
}
