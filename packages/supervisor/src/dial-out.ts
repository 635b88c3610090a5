import { readFileSync } from 'node:fs';
import { PassThrough, type Readable, Writable } from 'node:stream';
import type { SupervisorHello } from '@paddock/protocol';

/** Where the supervisor's frames arrive and where they go: a pipe's two ends, or a dialled WebSocket. */
export interface SupervisorLink {
  input: Readable;
  output: Writable;
}

/** How much may wait in the socket's buffer before the frame writer is told the link is full. */
const bufferedHighWater = 1024 * 1024;
const drainPollMs = 5;

/**
 * The token file's first line. Read as root before the supervisor takes the sandbox's user, who
 * cannot read it (the file is root's), and never put on argv or in any process's environment.
 */
export function readDialToken(file: string): string {
  return readFileSync(file, 'utf8').split('\n', 1)[0]!.trim();
}

/**
 * Dials `url` (Node's own WebSocket client) and sends the hello with `token`; answers the link once
 * the connection is open. The frames then travel as text messages; a message's bounds mean nothing
 * (the frames are lines, as on a pipe). The link's input ends when the connection closes, which ends
 * the supervisor as a pipe's end does.
 */
export function dialOut(url: string, token: string): Promise<SupervisorLink> {
  const socket = new WebSocket(url);
  socket.binaryType = 'arraybuffer';
  const input = new PassThrough();
  const decoder = new TextDecoder();
  socket.addEventListener('message', (event: MessageEvent) => {
    const data = event.data as string | ArrayBuffer;
    input.write(typeof data === 'string' ? data : decoder.decode(data));
  });
  socket.addEventListener('close', () => input.end());
  const output = new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _encoding, done) {
      if (socket.readyState !== WebSocket.OPEN) {
        done(new Error('the link to Paddock is closed'));
        return;
      }
      // Frames are text: a text message each.
      socket.send(typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
      // WebSocket has no drain event: the frame writer waits while the socket's buffer is past its mark.
      const whenDrained = () =>
        socket.bufferedAmount < bufferedHighWater || socket.readyState !== WebSocket.OPEN
          ? done()
          : setTimeout(whenDrained, drainPollMs);
      whenDrained();
    },
    final(done) {
      socket.close();
      done();
    },
  });
  return new Promise((resolve, reject) => {
    socket.addEventListener('open', () => {
      const hello: SupervisorHello = { hello: 'paddock-supervisor/1', token };
      socket.send(JSON.stringify(hello));
      resolve({ input, output });
    });
    socket.addEventListener('error', () => reject(new Error(`could not dial ${url}`)));
  });
}
