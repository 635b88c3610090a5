import type { Readable, Writable } from 'node:stream';

/**
 * Splits the engine's multiplexed attach stream (a container without a TTY): each frame is an 8-byte
 * header (stream type: 1 stdout, 2 stderr; three zero bytes; big-endian payload length) and its
 * payload. Ends both outputs when the stream ends.
 */
export function demuxStream(source: Readable, stdout: Writable, stderr: Writable): void {
  let pending: Buffer = Buffer.alloc(0);
  source.on('data', (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (pending.length >= 8) {
      const size = pending.readUInt32BE(4);
      if (pending.length < 8 + size) break;
      const payload = pending.subarray(8, 8 + size);
      (pending[0] === 2 ? stderr : stdout).write(payload);
      pending = pending.subarray(8 + size);
    }
  });
  const finish = (): void => {
    stdout.end();
    stderr.end();
  };
  source.once('end', finish);
  source.once('close', finish);
}
