/**
 * Collects a process's output but keeps only the last `limit` bytes: the end of a build log or a
 * test run is where the answer usually is.
 */
export function createOutputTail(limit: number) {
  const chunks: Buffer[] = [];
  let kept = 0;
  let total = 0;
  return {
    push(chunk: Buffer) {
      chunks.push(chunk);
      kept += chunk.length;
      total += chunk.length;
      while (chunks.length > 1 && kept - chunks[0].length >= limit) kept -= chunks.shift()!.length;
    },
    text(): string {
      let bytes = Buffer.concat(chunks);
      if (bytes.length > limit) bytes = bytes.subarray(bytes.length - limit);
      const omitted = total - bytes.length;
      const text = bytes.toString('utf8');
      return omitted > 0 ? `[output truncated: the first ${omitted} bytes were dropped]\n${text}` : text;
    },
  };
}
