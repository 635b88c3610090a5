import { createHash, timingSafeEqual } from 'node:crypto';
import { PassThrough, type Readable, Writable } from 'node:stream';
import { supervisorHelloSchema } from '@paddock/protocol';
import type { RawData, WebSocket } from 'ws';

/** A supervisor's link that came in over a WebSocket: what `SupervisorClient` takes, and its end. */
export interface DialedLink {
  /** Where requests go to the supervisor. */
  input: Writable;
  /** Where its frames arrive; ends when the connection closes. */
  output: Readable;
  /** Ends the connection (the supervisor then ends what it started, and itself). */
  close(): void;
}

interface Expected {
  digest: Buffer;
  resolve(link: DialedLink): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

/** How long a connection may take to say hello; the longest hello read. */
const helloTimeoutMs = 10_000;
const maxHelloBytes = 8 * 1024;
/** Close codes (RFC 6455): a policy violation, and a message too big. */
const refused = 1008;
const tooBig = 1009;

const digestOf = (token: string) => createHash('sha256').update(token).digest();
/** A message's bytes, however `ws` hands them over (whole, fragmented, or as an ArrayBuffer). */
const bytesOf = (data: RawData): Buffer =>
  Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);

/**
 * The supervisors that dial out to Paddock (a pod's, with no runner beside it to hold a pipe): a boot
 * says whose connection it waits for and with which token (`expect`); whatever serves the WebSocket
 * hands each connection to `accept` with the sandbox it says it is. A connection is taken only with
 * that sandbox's token in its first message; a token is good for one link, and only its digest is
 * kept. A connection that is refused changes nothing for the boot that waits.
 */
export class SupervisorDialIns {
  readonly #expected = new Map<string, Expected>();

  /** The link of `sandboxId`'s supervisor once it dials in with `token`; rejects after `timeoutMs`. */
  expect(sandboxId: string, token: string, timeoutMs: number): Promise<DialedLink> {
    if (this.#expected.has(sandboxId)) throw new Error(`sandbox ${sandboxId} is expected already`);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#expected.delete(sandboxId);
        reject(new Error(`the supervisor of sandbox ${sandboxId} did not dial in within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#expected.set(sandboxId, { digest: digestOf(token), resolve, reject, timer });
    });
  }

  /** Stops waiting for `sandboxId`'s supervisor (its boot was given up). */
  cancel(sandboxId: string, reason: Error): void {
    const expected = this.#expected.get(sandboxId);
    if (!expected) return;
    this.#expected.delete(sandboxId);
    clearTimeout(expected.timer);
    expected.reject(reason);
  }

  /** Takes a connection that says it is `sandboxId`'s supervisor, once its hello proves it. */
  accept(socket: WebSocket, sandboxId: string): void {
    const timer = setTimeout(() => socket.terminate(), helloTimeoutMs);
    socket.once('close', () => clearTimeout(timer));
    socket.once('message', (data: RawData) => {
      clearTimeout(timer);
      const hello = bytesOf(data);
      if (hello.length > maxHelloBytes) {
        socket.close(tooBig);
        return;
      }
      const expected = this.#expected.get(sandboxId);
      if (!expected || !proves(hello, expected.digest)) {
        socket.close(refused);
        return;
      }
      this.#expected.delete(sandboxId);
      clearTimeout(expected.timer);
      // In this same turn of the event loop, so no frame after the hello arrives before it is listened for.
      expected.resolve(linkOver(socket));
    });
  }
}

function proves(message: Buffer, digest: Buffer): boolean {
  let hello: unknown;
  try {
    hello = JSON.parse(message.toString('utf8'));
  } catch {
    return false;
  }
  const parsed = supervisorHelloSchema.safeParse(hello);
  return parsed.success && timingSafeEqual(digestOf(parsed.data.token), digest);
}

/** The connection as the two streams of a pipe: frames are lines, whatever the messages' bounds. */
function linkOver(socket: WebSocket): DialedLink {
  const output = new PassThrough();
  socket.on('message', (data: RawData) => output.write(bytesOf(data)));
  socket.once('close', () => output.end());
  socket.on('error', () => {});
  const input = new Writable({
    write(chunk: Buffer, _encoding, done) {
      // Called back once written to the socket: a slow supervisor holds its writers back.
      socket.send(chunk, { binary: false }, done);
    },
    final(done) {
      socket.close();
      done();
    },
  });
  return { input, output, close: () => socket.close() };
}
