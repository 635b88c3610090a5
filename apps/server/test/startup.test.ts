import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createPostgresDatabase, testDatabases } from '@paddock/testing';
import { freePort, waitUntilHealthy } from '@paddock/testing/http';
import { afterAll, describe, expect, it } from 'vitest';

/** A new user's first start, as the README says: `node apps/server/src/main.ts` (what `npm start` runs). */

const root = resolve(import.meta.dirname, '../../..');
const main = join(root, 'apps/server/src/main.ts');
const dirs: string[] = [];
afterAll(() => {
  // Every server stopped cleanly, so nothing it mounted is left under its data dir.
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8');
  const left = dirs.filter((dir) => mounts.includes(` ${dir}/`));
  for (const dir of dirs) if (!left.includes(dir)) rmSync(dir, { recursive: true, force: true });
  expect(left).toEqual([]);
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'paddock-startup-'));
  dirs.push(dir);
  return dir;
}

interface Started {
  url: string;
  stdout(): string;
  stderr(): string;
  /** The exit code, once the process is gone. */
  exited: Promise<number | null>;
  healthy(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts the server with `env` (`PORT` and `PADDOCK_DATA_DIR` at least) and none of this process's
 * Paddock settings; `terminal`: its stdout and stderr a pseudo-terminal (`script`), as in a shell.
 */
function start(env: Record<string, string>, terminal = false): Started {
  const command = terminal
    ? ['script', '-qfc', `'${process.execPath}' '${main}'`, '/dev/null']
    : [process.execPath, main];
  const child: ChildProcess = spawn(command[0]!, command.slice(1), {
    cwd: root,
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      DATABASE_URL: '',
      PADDOCK_BOOTSTRAP_TOKEN: '',
      PADDOCK_ADMIN_PASSWORD: '',
      PADDOCK_CONFIG: '',
      PADDOCK_LOG_LEVEL: '',
      PADDOCK_SANDBOX: process.env.PADDOCK_TEST_SANDBOX ?? 'auto',
      ...env,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (data) => (stdout += data));
  child.stderr!.on('data', (data) => (stderr += data));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const url = `http://127.0.0.1:${env.PORT}`;
  return {
    url,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    healthy: () => waitUntilHealthy(url, child, () => stdout + stderr),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        // Under `script`, the server itself: `script` would kill it if it did not stop in a moment.
        const pids = terminal ? childrenOf(child.pid!) : [child.pid!];
        for (const pid of pids) process.kill(pid, 'SIGTERM');
      }
      await exited;
    },
  };
}

function childrenOf(pid: number): number[] {
  return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
}

/** Resolves once the output holds a match, or fails with the output so far. */
async function outputMatches(server: Started, pattern: RegExp): Promise<void> {
  const until = Date.now() + 10_000;
  while (!pattern.test(server.stdout())) {
    if (Date.now() > until) throw new Error(`no ${pattern} in:\n${server.stdout()}${server.stderr()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.each(testDatabases())('the first start on $name', (database) => {
  // Three starts of the real server, each a process of its own: about 20 s alone, more on a busy machine.
  it.concurrent('bootstraps whole: a start failing before the admin commits leaves nothing, one failing after keeps the credentials', async () => {
    const dataDir = tempDir();
    const postgres =
      database.name === 'postgres' ? await createPostgresDatabase(database.adminUrl) : undefined;
    const port = await freePort();
    const env = { PORT: String(port), PADDOCK_DATA_DIR: dataDir, DATABASE_URL: postgres?.url ?? '' };
    const tokenFile = join(dataDir, 'bootstrap-token');
    try {
      // The token file cannot be written (a directory is in its place): no admin is left behind.
      mkdirSync(tokenFile, { recursive: true });
      let server = start(env);
      expect(await server.exited, server.stderr()).toBe(1);
      expect(server.stderr()).toMatch(/^paddock: cannot write in the data directory .*EISDIR.*\n$/);
      expect(server.stdout()).not.toContain('Bootstrap token');
      rmSync(tokenFile, { recursive: true });

      // The port is taken: this start bootstraps, then cannot listen, and says so in one line.
      const taken = createServer();
      await new Promise<void>((r) => taken.listen(port, '127.0.0.1', r));
      server = start(env);
      expect(await server.exited, server.stderr()).toBe(1);
      taken.close();
      expect(server.stderr()).toBe(`paddock: port ${port} on 127.0.0.1 is in use (PORT sets another)\n`);
      expect(server.stdout()).toContain(`saved to ${tokenFile}`);
      const token = readFileSync(tokenFile, 'utf8').trim();
      const password = readFileSync(join(dataDir, 'admin-password'), 'utf8').trim();

      // The next start does not bootstrap again, and the kept token and password work.
      server = start(env);
      await server.healthy();
      expect(server.stdout()).not.toContain('Bootstrap token');
      const orgs = await fetch(`${server.url}/v2/cli/orgs`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(orgs.status).toBe(200);
      expect(((await orgs.json()) as { items: { name: string }[] }).items.map((o) => o.name)).toEqual([
        'default',
      ]);
      const login = await fetch(`${server.url}/v2/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'admin', password }),
      });
      expect(login.status).toBe(200);
      const { access_token: session } = (await login.json()) as { access_token: string };
      const tokens = await fetch(`${server.url}/v2/cli/tokens`, {
        headers: { authorization: `Bearer ${session}` },
      });
      expect(tokens.status).toBe(200);
      await server.stop();
    } finally {
      await postgres?.drop();
    }
  }, 90_000);
});

describe('a start-up failure the user can fix is one line on stderr, without a stack', () => {
  it.concurrent('a deployment config that is not YAML: exit 2', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'paddock.yaml'), 'providers: {sandbox_b: {enabled: true}\n');
    const server = start({ PORT: '0', PADDOCK_DATA_DIR: dir, PADDOCK_CONFIG: join(dir, 'paddock.yaml') });
    expect(await server.exited).toBe(2);
    expect(server.stderr()).toMatch(
      new RegExp(
        `^paddock: invalid PADDOCK_CONFIG ${join(dir, 'paddock.yaml')}: Flow map [^\\n]* at line 2, column 1\\n$`,
      ),
    );
  });

  it.concurrent('a data dir that cannot be made: exit 1', async () => {
    const file = join(tempDir(), 'file');
    writeFileSync(file, '');
    const server = start({ PORT: '0', PADDOCK_DATA_DIR: join(file, 'data') });
    expect(await server.exited).toBe(1);
    expect(server.stderr()).toBe(
      `paddock: cannot write in the data directory ${file}/data: ENOTDIR: not a directory, mkdir '${file}/data' (PADDOCK_DATA_DIR sets another)\n`,
    );
  });

  it.concurrent('a database nothing answers at: exit 1, the password left out', async () => {
    const port = await freePort();
    const server = start({
      PORT: '0',
      PADDOCK_DATA_DIR: tempDir(),
      DATABASE_URL: `postgres://paddock:s3cret-pw@127.0.0.1:${port}/paddock`,
    });
    expect(await server.exited).toBe(1);
    expect(server.stderr()).toBe(
      `paddock: cannot open the database postgres://paddock:***@127.0.0.1:${port}/paddock: connect ECONNREFUSED 127.0.0.1:${port} (DATABASE_URL sets another)\n`,
    );
  });
});

describe('logs', () => {
  /** sandbox_b can never run: no engine answers here. */
  const noDocker = 'unix:///nonexistent/paddock-test-docker.sock';

  it.concurrent('are JSON lines when stdout is not a terminal; requests at debug, without the query secrets; switched-off providers at debug, switched-on ones warn', async () => {
    const dataDir = tempDir();
    const config = join(tempDir(), 'paddock.yaml');
    writeFileSync(config, 'providers:\n  sandbox_b: {enabled: true}\n');
    const server = start({
      PORT: String(await freePort()),
      PADDOCK_DATA_DIR: dataDir,
      PADDOCK_LOG_LEVEL: 'debug',
      PADDOCK_CONFIG: config,
      DOCKER_HOST: noDocker,
    });
    try {
      await server.healthy();
      await fetch(`${server.url}/healthz?expires=1&signature=s3cret-signature`);
      await outputMatches(server, /"url":"\/healthz\?.*"msg":"request"/);
      // The Docker probe and the micro-VM check run in the background, each logged either way.
      await outputMatches(server, /sandbox_b unavailable/);
      await outputMatches(server, /sandbox_f: micro-VMs/);
      // Beside the JSON lines, stdout holds only the lines saying where the bootstrap credentials are.
      const lines = server
        .stdout()
        .split('\n')
        .filter((line) => line && !/^(Bootstrap token |Admin password: | {2}saved to )/.test(line))
        .map((line) => JSON.parse(line) as { level: number; msg: string; [key: string]: unknown });
      expect(server.stderr()).toBe('');

      const requests = lines.filter((line) => line.msg === 'request' && String(line.url).includes('?'));
      expect(requests).toEqual([
        expect.objectContaining({
          level: 20,
          method: 'GET',
          url: '/healthz?expires=1&signature=redacted',
          status: 200,
          ms: expect.any(Number),
        }),
      ]);
      expect(server.stdout()).not.toContain('s3cret-signature');
      expect(lines.filter((line) => /incoming request|request completed/.test(line.msg))).toEqual([]);

      // sandbox_f is off: whatever its check found, at debug; sandbox_b is on and cannot run: a warning.
      expect(lines.filter((line) => line.msg.startsWith('sandbox_f')).map((line) => line.level)).toEqual([
        20,
      ]);
      expect(
        lines.filter((line) => line.msg.startsWith('sandbox_b')).map((line) => [line.level, line.msg]),
      ).toEqual([[40, expect.stringContaining(`sandbox_b unavailable: no Docker engine at ${noDocker}`)]]);
    } finally {
      await server.stop();
    }
  });

  it.concurrent('are lines for people on a terminal, at info without requests or switched-off providers', async () => {
    const dataDir = tempDir();
    const server = start(
      { PORT: String(await freePort()), PADDOCK_DATA_DIR: dataDir, DOCKER_HOST: noDocker },
      true,
    );
    try {
      await server.healthy();
      await fetch(`${server.url}/healthz`);
      await outputMatches(server, /INFO.*paddock is listening/);
      const lines = server
        .stdout()
        // biome-ignore lint/suspicious/noControlCharactersInRegex: the terminal's colours
        .replace(/\x1b\[[0-9;]*m/g, '')
        .split(/\r?\n/);
      // On a terminal the credentials' values are shown (they are in the files too).
      const token = readFileSync(join(dataDir, 'bootstrap-token'), 'utf8').trim();
      expect(lines).toContain(`Bootstrap token (admin, scopes read,publish,admin): ${token}`);
      expect(lines).toContainEqual(
        expect.stringMatching(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: paddock is listening \{"url":/),
      );
      expect(lines.filter((line) => line.startsWith('{'))).toEqual([]);
      expect(lines.filter((line) => /request|sandbox_b|sandbox_f/.test(line))).toEqual([]);
    } finally {
      await server.stop();
    }
  });
});

describe('npm test', () => {
  /** Runs vitest on one small test file, with or without a PostgreSQL server named. */
  async function vitest(databaseUrl: string | undefined): Promise<string> {
    const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('VITEST')));
    delete env.PADDOCK_TEST_DATABASE_URL;
    if (databaseUrl) env.PADDOCK_TEST_DATABASE_URL = databaseUrl;
    const child = spawn(
      process.execPath,
      [join(root, 'node_modules/vitest/vitest.mjs'), 'run', 'packages/core/test/workspace-path.test.ts'],
      { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (data) => (output += data));
    child.stderr.on('data', (data) => (output += data));
    const [code] = await once(child, 'exit');
    expect(code, output).toBe(0);
    return output;
  }

  it.concurrent('says at the end when the PostgreSQL half did not run, and how to run it', async () => {
    const [without, withPostgres] = await Promise.all([
      vitest(undefined),
      vitest('postgres://unused@127.0.0.1:1/x'),
    ]);
    expect(without.trimEnd().split('\n').at(-1)).toMatch(
      /^PostgreSQL tests skipped: set PADDOCK_TEST_DATABASE_URL=postgres:\/\/\S+ .* to run them; see README/,
    );
    expect(withPostgres).not.toContain('PostgreSQL tests skipped');
  });
});
