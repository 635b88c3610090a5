import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Faults } from '@paddock/core';
import { parseConfig } from '@paddock/server/config';
import { type Paddock, startPaddock } from '@paddock/server/paddock';
import type { HTTPMethods } from 'fastify';
import type { Logger } from 'pino';
import { createPostgresDatabase, type TestDatabase } from './databases.ts';
import { testHarnessCache } from './harness-cache.ts';
import { type ApiRequest, apiRequester, type Inject, injectRequester } from './http.ts';

export interface TestServer {
  paddock: Paddock;
  url: string;
  /** The admin's bootstrap token (scopes read, publish, admin). */
  token: string;
  dataDir: string;
  /** `fetch` against the server with the admin token unless another is given. */
  request: ApiRequest;
  close(): Promise<void>;
}

/**
 * Starts a real Paddock server on an ephemeral loopback port with its own data dir and database;
 * `faults` are the test-only hooks of core's `Faults`; `logger` replaces the silent one (to assert logs).
 */
export async function startTestServer(
  database: TestDatabase,
  env: Record<string, string> = {},
  options: { faults?: Faults; logger?: Logger } = {},
): Promise<TestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'paddock-test-'));
  const postgres = database.name === 'postgres' ? await createPostgresDatabase(database.adminUrl) : undefined;
  const token = `pdk_pat_test_${randomBytes(16).toString('hex')}`;
  const config = parseConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    PADDOCK_DATA_DIR: dataDir,
    PADDOCK_HARNESS_CACHE: testHarnessCache(),
    DATABASE_URL: postgres?.url,
    PADDOCK_BOOTSTRAP_TOKEN: token,
    PADDOCK_ADMIN_PASSWORD: 'test-password',
    PADDOCK_LOG_LEVEL: process.env.PADDOCK_TEST_LOG_LEVEL ?? 'silent',
    PADDOCK_LEASE_TTL_MS: '3000',
    // `auto` uses bubblewrap where it works; PADDOCK_TEST_SANDBOX=process runs the suite without it.
    PADDOCK_SANDBOX: process.env.PADDOCK_TEST_SANDBOX ?? 'auto',
    // No standby sandbox unless a test asks for one (standby-sandboxes, the coding agents): each
    // one boots and warms a harness, and is booted again after every thread that takes it, which
    // tests that never look at start-up latency pay for in CPU on a two-core machine.
    PADDOCK_STANDBY_SANDBOXES: '0',
    ...env,
  });
  const paddock = await startPaddock(config, { faults: options.faults, logger: options.logger });
  let closing: Promise<void> | undefined;
  return {
    paddock,
    url: paddock.url,
    token,
    dataDir,
    request: apiRequester(() => paddock.url, token),
    // Once, however often it is called (a test may stop one of two nodes before both are closed).
    close() {
      closing ??= (async () => {
        await paddock.close();
        await postgres?.drop();
        rmSync(dataDir, { recursive: true, force: true });
      })();
      return closing;
    },
  };
}

/** Every thread in the server's store, for asserting that a refused request wrote nothing. */
export function listThreadsForTest(server: TestServer): Promise<{ id: string }[]> {
  return server.paddock.services.store.db.selectFrom('threads').select('id').execute();
}

/**
 * A test server for tests of the control plane, which run no turn: it keeps no standby sandbox
 * booted (a thread that needs a sandbox boots its own).
 */
export function startControlPlaneServer(
  database: TestDatabase,
  env: Record<string, string> = {},
  options: { faults?: Faults; logger?: Logger } = {},
): Promise<TestServer> {
  return startTestServer(database, { PADDOCK_STANDBY_SANDBOXES: '0', ...env }, options);
}

/**
 * A control-plane server for tests that need no socket: its `request` hands each request to the
 * app in process (Fastify's `inject`). `startPaddock` listens, so the listener is closed at once: a
 * test that reaches for a socket (an event stream, a runner's websocket, a tus upload, a sandbox
 * calling back, another process) fails rather than passing by way of it.
 */
export async function startInjectedServer(
  database: TestDatabase,
  env: Record<string, string> = {},
  options: { faults?: Faults; logger?: Logger } = {},
): Promise<TestServer> {
  const server = await startControlPlaneServer(database, env, options);
  const { app } = server.paddock;
  await new Promise((resolve) => app.server.close(resolve));
  const inject: Inject = (request) => app.inject({ ...request, method: request.method as HTTPMethods });
  return { ...server, request: injectRequester(inject, server.token) };
}

/**
 * Two server nodes in this process on one fresh PostgreSQL database, sharing the deployment's
 * secret key (sealed signing keys, secrets), each with its own settings on top; started one after
 * the other (the first migrates). `close` stops both and drops the database.
 */
export async function startTwoNodes(
  adminUrl: string,
  env: { a?: Record<string, string>; b?: Record<string, string> } = {},
): Promise<{ a: TestServer; b: TestServer; close(): Promise<void> }> {
  const database = await createPostgresDatabase(adminUrl);
  const shared = { DATABASE_URL: database.url, PADDOCK_SECRET_KEY: randomBytes(32).toString('hex') };
  const postgres: TestDatabase = { name: 'postgres', adminUrl };
  const a = await startTestServer(postgres, { ...shared, ...env.a });
  const b = await startTestServer(postgres, { ...shared, ...env.b });
  return {
    a,
    b,
    async close() {
      await b.close();
      await a.close();
      await database.drop();
    },
  };
}
