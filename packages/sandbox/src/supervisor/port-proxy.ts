import { createReadStream, createWriteStream, openSync } from 'node:fs';
import { createServer } from 'node:net';
import { bindStream, encodeFrame, type FrameType, frameDecoder, frameType } from '../port-frames.ts';
import { loopbackApiPort } from './loopback-proxy.ts';

/**
 * In a micro-VM: listens on the guest's loopback like `startLoopbackProxy`, and carries every
 * connection as a stream over the API's virtio-serial port (`portPath`), which the host joins to the
 * runner's API proxy. The guest has no other network.
 */
export async function startPortProxy(portPath: string): Promise<void> {
  // One open for both directions: a virtio-serial port takes one opener at a time. A plain fd (not a
  // FileHandle, which garbage collection would close) that lives as long as the supervisor.
  const fd = openSync(portPath, 'r+');
  const output = createWriteStream('', { fd, autoClose: false });
  const write = (frame: Buffer): void => void output.write(frame);
  const streams = new Map<number, (type: FrameType, payload: Buffer) => void>();
  createReadStream('', { fd, autoClose: false }).on(
    'data',
    frameDecoder((type, stream, payload) => streams.get(stream)?.(type, payload)) as (
      chunk: string | Buffer,
    ) => void,
  );
  let next = 1;
  const server = createServer({ allowHalfOpen: true }, (client) => {
    const stream = next++;
    write(encodeFrame(frameType.open, stream));
    streams.set(
      stream,
      bindStream(client, stream, write, () => streams.delete(stream)),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(loopbackApiPort, '127.0.0.1', () => {
      server.off('error', reject);
      server.unref();
      resolve();
    });
  });
}
