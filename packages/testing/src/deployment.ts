import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { releaseVolumesUnder } from '@paddock/sandbox';
import { createPostgresDatabase, type TestDatabase } from './databases.ts';
import { testHarnessCache } from './harness-cache.ts';
import { type ApiRequest, apiRequester, freePort, waitUntilHealthy } from './http.ts';

const root = resolve(import.meta.dirname, '../../..');
const main = join(root, 'apps/server/src/main.ts');

/**
 * A real deployment for fault tests: the server and a detached runner, each its own process started
 * the way the README says (`node apps/server/src/main.ts [runner]`), sharing a data dir and a
 * database, so a test can kill -9 the server, stop the runner, and start them again.
 */
export interface Deployment {
  url: string;
  token: string;
  dataDir: string;
  /** The server's database: a PostgreSQL URL, or empty for SQLite in `dataDir`. */
  databaseUrl: string;
  /** Output of every process this deployment started, for failure messages. */
  output(): string;
  startServer(): Promise<void>;
  /** Sends the server a signal (default SIGKILL) and waits until it is gone. */
  killServer(signal?: NodeJS.Signals): Promise<void>;
  /**
   * Starts the deployment's runner; with options, another runner: its own env on top (e.g. a
   * self-hosted runner's agent token and data dir) and a command prefix (e.g. `ip netns exec <ns>`).
   */
  startRunner(options?: RunnerOptions): RunnerProcess;
  /** Signals the deployment's runner: SIGSTOP freezes it (it cannot reconnect), SIGCONT lets it go on. */
  signalRunner(signal: NodeJS.Signals): void;
  /** Resolves once the log shows this many runner connections in total. */
  runnerConnected(count: number): Promise<void>;
  /**
   * Resolves once the output holds `text` this many times (default once): a process's log reaches
   * the test through a pipe, possibly after an answer the same process sent later over HTTP.
   */
  logged(text: string, count?: number): Promise<void>;
  request: ApiRequest;
  close(): Promise<void>;
}

export interface RunnerOptions {
  name: string;
  env?: Record<string, string>;
  /** A command the runner runs under, e.g. `['ip', 'netns', 'exec', 'ns1']`. */
  prefix?: string[];
}

export interface RunnerProcess {
  /** Stops the runner (SIGTERM) and waits until it is gone. */
  stop(): Promise<void>;
}

export async function startDeployment(
  database: TestDatabase,
  env: Record<string, string> = {},
  /** The address the server listens on (default 127.0.0.1). */
  host = '127.0.0.1',
): Promise<Deployment> {
  const dataDir = mkdtempSync(join(tmpdir(), 'paddock-deploy-'));
  const postgres = database.name === 'postgres' ? await createPostgresDatabase(database.adminUrl) : undefined;
  const port = await freePort();
  const url = `http://${host}:${port}`;
  const token = `pdk_pat_test_${randomBytes(16).toString('hex')}`;
  const shared = {
    ...process.env,
    PORT: String(port),
    HOST: host,
    PADDOCK_DATA_DIR: dataDir,
    PADDOCK_HARNESS_CACHE: testHarnessCache(),
    DATABASE_URL: postgres?.url ?? '',
    PADDOCK_BOOTSTRAP_TOKEN: token,
    PADDOCK_RUNNER: 'detached',
    PADDOCK_RUNNER_TOKEN: randomBytes(24).toString('hex'),
    PADDOCK_SERVER_URL: url,
    PADDOCK_LOG_LEVEL: 'info',
    PADDOCK_SANDBOX: process.env.PADDOCK_TEST_SANDBOX ?? 'auto',
    ...env,
  };
  let log = '';
  let server: ChildProcess | undefined;
  let runner: ChildProcess | undefined;
  const others: RunnerProcess[] = [];
  const start = (
    args: string[],
    name: string,
    extra: Record<string, string> = {},
    prefix: string[] = [],
  ): ChildProcess => {
    const command = [...prefix, process.execPath, main, ...args];
    const child = spawn(command[0]!, command.slice(1), {
      cwd: root,
      env: { ...shared, ...extra },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const capture = (data: Buffer) => {
      log += String(data).replace(/^(?=.)/gm, `[${name}] `);
    };
    child.stdout!.on('data', capture);
    child.stderr!.on('data', capture);
    return child;
  };
  const deployment: Deployment = {
    url,
    token,
    dataDir,
    databaseUrl: postgres?.url ?? '',
    output: () => log,
    async startServer() {
      server = start([], 'server');
      await waitUntilHealthy(url, server, () => log);
    },
    async killServer(signal = 'SIGKILL') {
      const child = server;
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill(signal);
      await exited;
    },
    startRunner(options) {
      const child = start(['runner'], options?.name ?? 'runner', options?.env, options?.prefix);
      const handle = { stop: () => stopChild(child) };
      if (options) others.push(handle);
      else runner = child;
      return handle;
    },
    signalRunner(signal) {
      runner?.kill(signal);
    },
    runnerConnected: (count) => deployment.logged('"msg":"runner connected"', count),
    async logged(text, count = 1) {
      const until = Date.now() + 20_000;
      while (log.split(text).length - 1 < count) {
        if (Date.now() > until) throw new Error(`the output did not show ${text} ${count} times:\n${log}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    request: apiRequester(() => url, token),
    async close() {
      runner?.kill('SIGCONT');
      await deployment.killServer('SIGTERM');
      if (runner) await stopChild(runner);
      for (const other of others) await other.stop();
      await postgres?.drop();
      // A server or runner killed on purpose leaves its workspace volumes mounted: rm must not go in.
      await releaseVolumesUnder(dataDir);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return deployment;
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}
