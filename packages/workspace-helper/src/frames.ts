import { readSync, writeSync } from 'node:fs';

/**
 * The helper's side of its stdio: frames of a type byte and a 32-bit big-endian length, then the
 * payload. `J` carries a JSON message, `D` a piece of a file, `E` the end of a file's pieces and
 * `A` an upload the server gave up on.
 */
export type FrameType = 'J' | 'D' | 'E' | 'A';

export interface Frame {
  type: FrameType;
  payload: Buffer;
}

/** The next frame from `fd`; undefined once the server closed it. */
export function readFrame(fd: number): Frame | undefined {
  const header = readExactly(fd, 5);
  if (!header) return undefined;
  const payload = readExactly(fd, header.readUInt32BE(1)) ?? Buffer.alloc(0);
  return { type: String.fromCharCode(header[0]!) as FrameType, payload };
}

export function writeFrame(fd: number, type: FrameType, payload: Buffer = Buffer.alloc(0)): void {
  const frame = encodeFrame(type, payload);
  for (let at = 0; at < frame.length; ) at += writeSync(fd, frame, at, frame.length - at);
}

export function encodeFrame(type: FrameType, payload: Buffer = Buffer.alloc(0)): Buffer {
  const header = Buffer.alloc(5);
  header[0] = type.charCodeAt(0);
  header.writeUInt32BE(payload.length, 1);
  return Buffer.concat([header, payload]);
}

function readExactly(fd: number, length: number): Buffer | undefined {
  const buffer = Buffer.alloc(length);
  for (let at = 0; at < length; ) {
    const read = readSync(fd, buffer, at, length - at, null);
    if (read === 0) {
      if (at === 0 && length > 0) return undefined;
      throw new Error('the server closed the helper mid-frame');
    }
    at += read;
  }
  return buffer;
}

/** The server's side: frames out of a byte stream, as they complete. */
export class FrameParser {
  #pending: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Frame[] {
    this.#pending = this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk]);
    const frames: Frame[] = [];
    while (this.#pending.length >= 5) {
      const length = this.#pending.readUInt32BE(1);
      if (this.#pending.length < 5 + length) break;
      frames.push({
        type: String.fromCharCode(this.#pending[0]!) as FrameType,
        payload: this.#pending.subarray(5, 5 + length),
      });
      this.#pending = this.#pending.subarray(5 + length);
    }
    return frames;
  }
}
