import { connect, type Socket } from 'node:net';
import { bindStream, type FrameType, frameDecoder, frameType } from './port-frames.ts';

/**
 * The host end of a micro-VM's API or egress port (QEMU's chardev connection): each stream the
 * guest opens becomes a connection to `socketPath`, the runner's API proxy socket or the sandbox's
 * egress proxy, the same ones bubblewrap sandboxes reach.
 */
export function servePort(port: Socket, socketPath: string): void {
  const streams = new Map<number, (type: FrameType, payload: Buffer) => void>();
  const write = (frame: Buffer): void => {
    if (!port.destroyed) port.write(frame);
  };
  port.on(
    'data',
    frameDecoder((type, stream, payload) => {
      if (type !== frameType.open) return streams.get(stream)?.(type, payload);
      if (streams.has(stream)) return;
      const upstream = connect({ path: socketPath, allowHalfOpen: true });
      streams.set(
        stream,
        bindStream(upstream, stream, write, () => streams.delete(stream)),
      );
    }),
  );
  port.on('error', () => port.destroy());
  port.on('close', () => {
    for (const deliver of streams.values()) deliver(frameType.close, Buffer.alloc(0));
  });
}
