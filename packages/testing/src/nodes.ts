import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { releaseVolumesUnder } from '@paddock/sandbox';
import pg from 'pg';
import { createPostgresDatabase } from './databases.ts';
import { testHarnessCache } from './harness-cache.ts';
import { type ApiRequest, apiRequester, freePort, waitUntilHealthy } from './http.ts';

const main = resolve(import.meta.dirname, '../../../apps/server/src/main.ts');

/** One server node, its own process (`node apps/server/src/main.ts`) with a data dir of its own. */
export interface NodeProcess {
  name: string;
  url: string;
  dataDir: string;
  /** The node's id (its data dir's `node-id`): what its leases and thread tokens name. */
  nodeId(): string;
  request: ApiRequest;
  /** Sends a signal (default SIGKILL) and waits until the process is gone. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Server nodes on one fresh PostgreSQL database, for fault tests with real processes: they share
 * the secret key and an admin token (`token`), and are started one after the other (the first
 * migrates the database). `close` stops whatever still runs and drops the database.
 */
export async function startNodes(
  adminUrl: string,
  nodes: { name: string; env?: Record<string, string> }[],
): Promise<{
  nodes: NodeProcess[];
  token: string;
  /** One query on the nodes' database (to look at what the API does not show, such as leases). */
  query<R extends object>(text: string, values?: unknown[]): Promise<R[]>;
  output(): string;
  /**
   * Starts a detached runner (`node apps/server/src/main.ts runner`) with the nodes' settings, `env`
   * on top (its data dir, the server URL it connects to, the runner token); stopped by `close`.
   */
  startRunner(name: string, env: Record<string, string>): NodeProcess;
  close(): Promise<void>;
}> {
  const database = await createPostgresDatabase(adminUrl);
  const root = mkdtempSync(join(tmpdir(), 'paddock-nodes-'));
  const token = `pdk_pat_test_${randomBytes(16).toString('hex')}`;
  const shared = {
    ...process.env,
    DATABASE_URL: database.url,
    PADDOCK_SECRET_KEY: randomBytes(32).toString('hex'),
    PADDOCK_BOOTSTRAP_TOKEN: token,
    PADDOCK_HARNESS_CACHE: testHarnessCache(),
    PADDOCK_LOG_LEVEL: 'info',
    PADDOCK_STANDBY_SANDBOXES: '0',
  };
  let log = '';
  const children: ChildProcess[] = [];
  const started: NodeProcess[] = [];
  const spawnProcess = (name: string, args: string[], env: Record<string, string>, url: string) => {
    const dataDir = env.PADDOCK_DATA_DIR!;
    const child = spawn(process.execPath, [main, ...args], {
      env: { ...shared, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const capture = (data: Buffer) => {
      log += String(data).replace(/^(?=.)/gm, `[${name}] `);
    };
    child.stdout!.on('data', capture);
    child.stderr!.on('data', capture);
    children.push(child);
    const started: NodeProcess = {
      name,
      url,
      dataDir,
      nodeId: () => readFileSync(join(dataDir, 'node-id'), 'utf8').trim(),
      request: apiRequester(() => url, token),
      async kill(signal = 'SIGKILL') {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((r) => child.once('exit', r));
        child.kill(signal);
        await exited;
      },
    };
    return { child, started };
  };
  for (const { name, env } of nodes) {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const node = spawnProcess(
      name,
      [],
      { PORT: String(port), PADDOCK_DATA_DIR: join(root, name), ...env },
      url,
    );
    await waitUntilHealthy(url, node.child, () => log);
    started.push(node.started);
  }
  const runners: NodeProcess[] = [];
  return {
    nodes: started,
    token,
    startRunner(name, env) {
      const runner = spawnProcess(name, ['runner'], env, env.PADDOCK_SERVER_URL ?? '');
      runners.push(runner.started);
      return runner.started;
    },
    async query<R extends object>(text: string, values: unknown[] = []) {
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        return (await client.query<R>(text, values)).rows;
      } finally {
        await client.end();
      }
    },
    output: () => log,
    async close() {
      for (const node of [...started, ...runners]) await node.kill('SIGTERM');
      await database.drop();
      // A node killed on purpose leaves its workspace volumes mounted: rm must not go in.
      await releaseVolumesUnder(root);
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/**
 * A TCP load balancer with failover, as one in front of server nodes would be: each connection goes
 * to the first of `targets` that accepts it, so once a node is gone its clients reach the next.
 */
export async function failoverProxy(targets: string[]): Promise<{ url: string; close(): Promise<void> }> {
  const addresses = targets.map((target) => new URL(target));
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.pause();
    const attempt = (index: number) => {
      const address = addresses[index];
      if (!address) return client.destroy();
      const upstream = connect(Number(address.port), address.hostname);
      let connected = false;
      upstream.once('error', () => {
        if (!connected) attempt(index + 1);
        else client.destroy();
      });
      upstream.once('connect', () => {
        connected = true;
        sockets.add(upstream);
        upstream.on('close', () => {
          sockets.delete(upstream);
          client.destroy();
        });
        client.on('close', () => upstream.destroy());
        client.on('error', () => upstream.destroy());
        client.pipe(upstream).pipe(client);
        client.resume();
      });
    };
    attempt(0);
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
