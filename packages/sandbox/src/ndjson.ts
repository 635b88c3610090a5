import type { Readable } from 'node:stream';

/**
 * Calls `onLine` with each complete line of a text stream. Shared by the runner and the supervisor,
 * so it may only import node builtins (the supervisor's boot time depends on it).
 */
export function readLines(stream: Readable, onLine: (line: string) => void): void {
  let pending = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    pending += chunk;
    let start = 0;
    let newline = pending.indexOf('\n', start);
    while (newline !== -1) {
      const line = pending.slice(start, newline);
      start = newline + 1;
      if (line.trim() !== '') onLine(line);
      newline = pending.indexOf('\n', start);
    }
    pending = pending.slice(start);
  });
}

export function toNdjson(value: unknown): string {
  return `${JSON.stringify(value)}\n`;
}
