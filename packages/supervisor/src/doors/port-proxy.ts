import { createReadStream, createWriteStream, openSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { loopbackApiPort } from './loopback-proxy.ts';
import { bindStream, encodeFrame, type FrameType, frameDecoder, frameType } from './port-frames.ts';

/** Connections carried as streams over one virtio-serial port. */
export interface PortStreams {
  /** Carries `client` as a new stream, `head` (bytes already read from it) first. */
  open(client: Socket, head?: Buffer): void;
}

/**
 * In a micro-VM: the virtio-serial port at `portPath`, whose host end joins each stream the guest
 * opens to a socket of the runner's (the API proxy, or the sandbox's egress proxy).
 */
export function openPortStreams(portPath: string): PortStreams {
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
  return {
    open(client, head) {
      const stream = next++;
      write(encodeFrame(frameType.open, stream));
      if (head && head.length > 0) write(encodeFrame(frameType.data, stream, head));
      streams.set(
        stream,
        bindStream(client, stream, write, () => streams.delete(stream)),
      );
      client.resume();
    },
  };
}

/**
 * In a micro-VM: listens on the guest's loopback like `startLoopbackProxy`, and carries every
 * connection as a stream over the API's virtio-serial port (`portPath`), which the host joins to the
 * runner's API proxy. The guest has no other network.
 */
export async function startPortProxy(portPath: string): Promise<void> {
  const port = openPortStreams(portPath);
  const server = createServer({ allowHalfOpen: true }, (client) => port.open(client));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(loopbackApiPort, '127.0.0.1', () => {
      server.off('error', reject);
      server.unref();
      resolve();
    });
  });
}
