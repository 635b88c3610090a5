import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createPostgresDatabase, type TestDatabase } from './databases.ts';
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
  /** Output of every process this deployment started, for failure messages. */
  output(): string;
  startServer(): Promise<void>;
  /** Sends the server a signal (default SIGKILL) and waits until it is gone. */
  killServer(signal?: NodeJS.Signals): Promise<void>;
  startRunner(): void;
  /** Signals the runner: SIGSTOP freezes it (it cannot reconnect), SIGCONT lets it go on. */
  signalRunner(signal: NodeJS.Signals): void;
  /** Resolves once the log shows this many runner connections in total. */
  runnerConnected(count: number): Promise<void>;
  request: ApiRequest;
  close(): Promise<void>;
}

export async function startDeployment(
  database: TestDatabase,
  env: Record<string, string> = {},
): Promise<Deployment> {
  const dataDir = mkdtempSync(join(tmpdir(), 'paddock-deploy-'));
  const postgres = database.name === 'postgres' ? await createPostgresDatabase(database.adminUrl) : undefined;
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const token = `pdk_pat_test_${randomBytes(16).toString('hex')}`;
  const shared = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    PADDOCK_DATA_DIR: dataDir,
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
  const start = (args: string[], name: string): ChildProcess => {
    const child = spawn(process.execPath, [main, ...args], {
      cwd: root,
      env: shared,
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
    startRunner() {
      runner = start(['runner'], 'runner');
    },
    signalRunner(signal) {
      runner?.kill(signal);
    },
    async runnerConnected(count) {
      const until = Date.now() + 20_000;
      while ((log.match(/"msg":"runner connected"/g) ?? []).length < count) {
        if (Date.now() > until) throw new Error(`runner did not connect:\n${log}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    request: apiRequester(() => url, token),
    async close() {
      runner?.kill('SIGCONT');
      await deployment.killServer('SIGTERM');
      if (runner && runner.exitCode === null) {
        const exited = new Promise((r) => runner!.once('exit', r));
        runner.kill('SIGTERM');
        await exited;
      }
      await postgres?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return deployment;
}
