import type { Server } from 'node:http';
import type { ApiTarget } from '@paddock/sandbox';

export interface ServerAddress {
  /** The server as this host reaches it: where the sandboxes' API proxy forwards to. */
  readonly target: ApiTarget;
  /** Its base URL, e.g. `http://127.0.0.1:8787`. */
  url(): string;
  /** Takes the port the server listens on (`PORT=0` picks one). */
  listening(server: Server): void;
}

/**
 * The server's own address, for the sandboxes' API proxy and boots: known once it listens, read by
 * each connection the proxy forwards and each boot, so everything using it is built before.
 */
export function serverAddress(host: string, port: number): ServerAddress {
  let current = port;
  const hostPart = host.includes(':') ? `[${host}]` : host;
  return {
    target: {
      host,
      get port() {
        return current;
      },
    },
    url: () => `http://${hostPart}:${current}`,
    listening(server) {
      const address = server.address();
      if (typeof address === 'object' && address) current = address.port;
    },
  };
}
