import type { Readable } from 'node:stream';

export interface ReadLinesBound {
  /** The longest line taken, in characters (UTF-16 units); a longer one ends the reading. */
  maxLineChars: number;
  /** Called once when a line grows past the bound; no line is delivered after it. */
  onTooLong: () => void;
}

/**
 * Calls `onLine` with each complete line of a text stream; answers a function that stops delivering
 * (and buffering). With a bound, a line never grows past it in memory: the writer may be a sandbox.
 */
export function readLines(
  stream: Readable,
  onLine: (line: string) => void,
  bound?: ReadLinesBound,
): () => void {
  // The current line's pieces, joined once its newline arrives: a long line costs no rescans.
  let pieces: string[] = [];
  let length = 0;
  let stopped = false;
  const stop = (): void => {
    stopped = true;
    pieces = [];
    stream.off('data', onData);
  };
  const onData = (chunk: string): void => {
    let start = 0;
    let newline = chunk.indexOf('\n');
    while (newline !== -1 && !stopped) {
      const piece = chunk.slice(start, newline);
      if (bound && length + piece.length > bound.maxLineChars) {
        tooLong();
        return;
      }
      const line = pieces.length === 0 ? piece : pieces.join('') + piece;
      pieces = [];
      length = 0;
      start = newline + 1;
      if (line.trim() !== '') onLine(line);
      newline = chunk.indexOf('\n', start);
    }
    if (stopped || start === chunk.length) return;
    const rest = chunk.slice(start);
    if (bound && length + rest.length > bound.maxLineChars) {
      tooLong();
      return;
    }
    pieces.push(rest);
    length += rest.length;
  };
  const tooLong = (): void => {
    stop();
    // Keep the stream flowing into nothing, so its writer never blocks on a full pipe.
    stream.resume();
    bound?.onTooLong();
  };
  stream.setEncoding('utf8');
  stream.on('data', onData);
  return stop;
}
