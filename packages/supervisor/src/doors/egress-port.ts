import { connect, createServer, type Server, type Socket } from 'node:net';
import { pipeSockets } from './pipe-sockets.ts';

/** Inside the sandbox HTTP(S)_PROXY is http://127.0.0.1:8788 (see sandbox-egress.ts). */
export const egressPort = 8788;

/** A request head longer than this is no proxy request's. */
const maxHeadBytes = 16 * 1024;

/** Passes a proxy request on to the runner's egress proxy: its connection, and the head read from it. */
export type EgressUpstream = (client: Socket, head: Buffer) => void;

/** The runner's egress proxy on the socket the provider shows at `socketPath` (bwrap, Docker). */
export function socketUpstream(socketPath: string): EgressUpstream {
  return (client, head) => {
    const upstream = connect({ path: socketPath, allowHalfOpen: true });
    upstream.write(head);
    pipeSockets(client, upstream);
    client.resume();
  };
}

/**
 * Listens on the sandbox's own loopback and passes each proxy request to the runner's egress proxy
 * (`upstream`), which decides it. One kind is served here: a CONNECT to the sandbox's own loopback.
 * Clients that ignore NO_PROXY (undici's ProxyAgent, which Qwen Code uses) tunnel even their calls
 * to the Paddock API on 127.0.0.1:8787 through the proxy, and the runner's proxy refuses loopback
 * under every policy; inside the sandbox, loopback is the sandbox's own.
 */
export function startEgressPort(upstream: EgressUpstream): Promise<Server> {
  const server = createServer({ allowHalfOpen: true }, (client) => {
    client.on('error', () => client.destroy());
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end === -1) {
        if (head.length > maxHeadBytes) client.destroy();
        return;
      }
      client.off('data', onData);
      client.pause();
      const firstLine = head.subarray(0, head.indexOf('\r\n')).toString('latin1');
      const target = loopbackConnectTarget(firstLine);
      if (target === undefined) upstream(client, head);
      else serveLocally(client, target, head.subarray(end + 4));
    };
    client.on('data', onData);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(egressPort, '127.0.0.1', () => {
      server.off('error', reject);
      // The listener must not keep the supervisor alive after stdin closes.
      server.unref();
      resolve(server);
    });
  });
}

/** Where `CONNECT <loopback>:<port> HTTP/1.1` goes; undefined for any other request. */
export function loopbackConnectTarget(requestLine: string): { host: string; port: number } | undefined {
  const match = /^CONNECT (127\.0\.0\.1|localhost|\[::1\]):(\d{1,5}) HTTP\/1\.[01]$/i.exec(requestLine);
  const port = match ? Number(match[2]) : 0;
  if (port < 1 || port > 65_535) return undefined;
  return { host: match![1] === '[::1]' ? '::1' : '127.0.0.1', port };
}

function serveLocally(client: Socket, target: { host: string; port: number }, rest: Buffer): void {
  const local = connect({ ...target, allowHalfOpen: true });
  local.once('error', () =>
    client.end('HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\nconnection: close\r\n\r\n'),
  );
  local.once('connect', () => {
    local.removeAllListeners('error');
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (rest.length > 0) local.write(rest);
    pipeSockets(client, local);
    client.resume();
  });
}
