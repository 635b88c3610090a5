/**
 * Collects a process's output but keeps only the last `limit` bytes: the end of a build log or a
 * test run is where the answer usually is.
 */
export function createOutputTail(limit: number) {
  const chunks: Buffer[] = [];
  let kept = 0;
  let total = 0;
  /** The bytes kept, and how many were dropped before them. */
  const tail = (): { text: string; dropped: number } => {
    let bytes = Buffer.concat(chunks);
    if (bytes.length > limit) bytes = bytes.subarray(bytes.length - limit);
    return { text: bytes.toString('utf8'), dropped: total - bytes.length };
  };
  return {
    push(chunk: Buffer) {
      chunks.push(chunk);
      kept += chunk.length;
      total += chunk.length;
      while (chunks.length > 1 && kept - chunks[0].length >= limit) kept -= chunks.shift()!.length;
    },
    tail,
    /** The kept output, headed by a note when some was dropped. */
    text(): string {
      const { text, dropped } = tail();
      return dropped > 0 ? `[output truncated: the first ${dropped} bytes were dropped]\n${text}` : text;
    },
  };
}
