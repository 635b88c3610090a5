import { chmod, mkdir, rm } from 'node:fs/promises';
import { connect, createServer, type Socket } from 'node:net';
import { dirname } from 'node:path';
import { pipeSockets } from './pipe-sockets.ts';

export interface ApiTarget {
  host: string;
  port: number;
}

export interface ApiProxy {
  readonly socketPath: string;
  close(): Promise<void>;
}

/**
 * The host end of the sandbox's only way out: a unix socket that pipes every connection to the
 * Paddock server. Mode 0666 because the sandbox connects as its unprivileged uid; anyone who can
 * reach the socket reaches only the Paddock server, which listens on TCP anyway.
 */
export async function startApiProxy(options: { socketPath: string; target: ApiTarget }): Promise<ApiProxy> {
  const { socketPath, target } = options;
  const directory = dirname(socketPath);
  await mkdir(directory, { recursive: true });
  await chmod(directory, 0o755);
  await rm(socketPath, { force: true });

  const open = new Set<Socket>();
  const server = createServer({ allowHalfOpen: true }, (client) => {
    const upstream = connect({ host: target.host, port: target.port, allowHalfOpen: true });
    open.add(client);
    client.on('close', () => open.delete(client));
    pipeSockets(client, upstream);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => {
      server.off('error', reject);
      resolve();
    });
  });
  await chmod(socketPath, 0o666);

  return {
    socketPath,
    async close() {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(socketPath, { force: true });
    },
  };
}
