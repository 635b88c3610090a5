/**
 * The `paddock` program as a subprocess against a real server (one per test file): `cli` answers
 * its exit code and output, `json` parses its `--json` document; everything it printed is kept in
 * `printed` (to look for a secret in).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { TestDatabase } from '@paddock/testing';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, expect } from 'vitest';

const bin = resolve(import.meta.dirname, '../bin/paddock.js');

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface Harness {
  server: TestServer;
  dir: string;
  printed: string[];
  /** `input` is its stdin (closed after it: not a terminal). */
  cli(args: string[], extraEnv?: Record<string, string | undefined>, input?: string): Promise<Ran>;
  /** Exit 0 expected. */
  ok(args: string[], input?: string): Promise<Ran>;
  // biome-ignore lint/suspicious/noExplicitAny: a parsed --json document
  json(args: string[], input?: string): Promise<any>;
}

/** Registers beforeAll/afterAll for one server; the harness's fields are set once beforeAll ran. */
export function controlPlaneHarness(database: TestDatabase): Harness {
  let env: Record<string, string> = {};
  const harness: Harness = {
    server: undefined as unknown as TestServer,
    dir: '',
    printed: [],
    cli(args, extraEnv = {}, input = '') {
      const child = spawn(process.execPath, [bin, ...args], {
        env: Object.fromEntries(
          Object.entries({ ...env, ...extraEnv }).filter(([, v]) => v !== undefined),
        ) as NodeJS.ProcessEnv,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      const ran: Ran = { code: null, stdout: '', stderr: '' };
      child.stdout.on('data', (chunk: Buffer) => (ran.stdout += chunk.toString('utf8')));
      child.stderr.on('data', (chunk: Buffer) => (ran.stderr += chunk.toString('utf8')));
      child.stdin.end(input);
      return new Promise((done) =>
        child.on('close', (code) => {
          harness.printed.push(ran.stdout, ran.stderr);
          done({ ...ran, code });
        }),
      );
    },
    async ok(args, input) {
      const ran = await harness.cli(args, {}, input);
      expect(ran.code, `paddock ${args.join(' ')}\n${ran.stderr}`).toBe(0);
      return ran;
    },
    async json(args, input) {
      return JSON.parse((await harness.ok(['--json', ...args], input)).stdout);
    },
  };
  beforeAll(async () => {
    harness.server = await startTestServer(database);
    harness.dir = await mkdtemp(join(tmpdir(), 'paddock-cli-cp-'));
    env = {
      PATH: process.env.PATH ?? '',
      HOME: harness.dir,
      XDG_CONFIG_HOME: join(harness.dir, 'config'),
      NO_COLOR: '1',
      SERVICE_TOKEN: harness.server.token,
      PADDOCK_URL: harness.server.url,
    };
  });
  afterAll(async () => {
    await harness.server?.close();
    if (harness.dir) await rm(harness.dir, { recursive: true, force: true });
  });
  return harness;
}
