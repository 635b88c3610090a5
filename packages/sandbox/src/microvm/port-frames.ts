import type { Socket } from 'node:net';

/**
 * Many TCP connections over one byte stream (a virtio-serial port, which carries exactly one): each
 * frame is a type byte, a 32-bit stream id and a 32-bit payload length, then the payload. The guest
 * opens streams; either side may end its half (`end`) or drop the stream (`close`). The host's end;
 * the supervisor's is `packages/supervisor/port_streams.go`.
 */
export const frameType = { open: 1, data: 2, end: 3, close: 4 } as const;
export type FrameType = (typeof frameType)[keyof typeof frameType];

const headerBytes = 9;

export function encodeFrame(type: FrameType, stream: number, payload?: Buffer): Buffer {
  const header = Buffer.alloc(headerBytes);
  header.writeUInt8(type, 0);
  header.writeUInt32BE(stream, 1);
  header.writeUInt32BE(payload?.length ?? 0, 5);
  return payload ? Buffer.concat([header, payload]) : header;
}

/** Calls `onFrame` for each whole frame in the chunks it is fed. */
export function frameDecoder(
  onFrame: (type: FrameType, stream: number, payload: Buffer) => void,
): (chunk: Buffer) => void {
  let pending: Buffer = Buffer.alloc(0);
  return (chunk) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    while (pending.length >= headerBytes) {
      const length = pending.readUInt32BE(5);
      if (pending.length < headerBytes + length) break;
      const payload = pending.subarray(headerBytes, headerBytes + length);
      onFrame(pending.readUInt8(0) as FrameType, pending.readUInt32BE(1), payload);
      pending = pending.subarray(headerBytes + length);
    }
  };
}

/**
 * Ties one socket to its stream over the port: what the socket sends goes out as `data` and `end`
 * frames; `deliver` takes the frames that arrive for it. Answers the function that delivers them.
 */
export function bindStream(
  socket: Socket,
  stream: number,
  write: (frame: Buffer) => void,
  onGone: () => void,
): (type: FrameType, payload: Buffer) => void {
  let gone = false;
  const drop = (tell: boolean): void => {
    if (gone) return;
    gone = true;
    if (tell) write(encodeFrame(frameType.close, stream));
    socket.destroy();
    onGone();
  };
  socket.on('data', (data: Buffer) => write(encodeFrame(frameType.data, stream, data)));
  socket.on('end', () => write(encodeFrame(frameType.end, stream)));
  socket.on('error', () => drop(true));
  socket.on('close', () => drop(true));
  return (type, payload) => {
    if (type === frameType.data) socket.write(payload);
    else if (type === frameType.end) socket.end();
    else if (type === frameType.close) drop(false);
  };
}
