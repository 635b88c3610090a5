import { chmod, mkdir, rm } from 'node:fs/promises';
import { connect, createServer, type Socket } from 'node:net';
import { dirname } from 'node:path';
import { pipeSockets } from './pipe-sockets.ts';

export interface ApiTarget {
  host: string;
  /** Read for each connection: a server that learns its port when it listens gives a getter. */
  readonly port: number;
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
export async function startApiProxy(options: {
  socketPath: string;
  target: ApiTarget;
  /** Keep trying an unreachable server this long (it may be restarting) before giving the connection up. */
  connectRetryMs?: number;
}): Promise<ApiProxy> {
  const { socketPath, target } = options;
  const directory = dirname(socketPath);
  await mkdir(directory, { recursive: true });
  await chmod(directory, 0o755);
  await rm(socketPath, { force: true });

  const open = new Set<Socket>();
  const server = createServer({ allowHalfOpen: true, pauseOnConnect: true }, (client) => {
    open.add(client);
    client.on('close', () => open.delete(client));
    client.on('error', () => client.destroy());
    const deadline = Date.now() + (options.connectRetryMs ?? 0);
    const attempt = (): void => {
      const upstream = connect({ host: target.host, port: target.port, allowHalfOpen: true });
      upstream.once('error', () => {
        if (client.destroyed || Date.now() >= deadline) client.destroy();
        else setTimeout(attempt, 200);
      });
      upstream.once('connect', () => {
        upstream.removeAllListeners('error');
        pipeSockets(client, upstream);
        client.resume();
      });
    };
    attempt();
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
