import { connect, createServer } from 'node:net';
import { pipeSockets } from './pipe-sockets.ts';

/** Inside the sandbox PADDOCK_API_URL is http://127.0.0.1:8787; this port is fixed so scripts can rely on it. */
export const loopbackApiPort = 8787;

/** Listens on the sandbox's own loopback and pipes each connection to the host's API proxy socket. */
export function startLoopbackProxy(socketPath: string): Promise<void> {
  const server = createServer({ allowHalfOpen: true }, (client) => {
    pipeSockets(client, connect({ path: socketPath, allowHalfOpen: true }));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(loopbackApiPort, '127.0.0.1', () => {
      server.off('error', reject);
      // The proxy must not keep the supervisor alive after stdin closes.
      server.unref();
      resolve();
    });
  });
}
