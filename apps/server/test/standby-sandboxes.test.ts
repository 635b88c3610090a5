import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { testDatabases } from '@paddock/testing';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import { afterEach, describe, expect, it } from 'vitest';
import { agentSpec, allEvents, json, settled } from './helpers.ts';

/** The in-process runner's standby sandboxes: a workspace directory each, while booted. */
const standbyDir = (server: TestServer) => join(server.dataDir, 'sandboxes', 'standby');

/** Runs a first thread's turn; answers how its sandbox came up (the `sandbox.status` detail). */
async function firstBoot(server: TestServer): Promise<string | undefined> {
  const { thread_id: threadId } = await json<{ thread_id: string }>(
    await server.request('POST', '/v2/threads', {
      body: { agent: agentSpec(), messages: [{ content: '::sh echo hi' }] },
    }),
    201,
  );
  expect((await settled(server, threadId)).status).toBe('idle');
  const running = (await allEvents(server, threadId)).find(
    (e) => e.type === 'sandbox.status' && (e.data as { status: string }).status === 'running',
  );
  return (running?.data as { detail?: string } | undefined)?.detail;
}

describe.each(testDatabases())('standby sandboxes ($name)', (database) => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('keeps one booted by default, which the first thread takes over', async () => {
    server = await startTestServer(database, { PADDOCK_STANDBY_SANDBOXES: '1' });
    const dir = standbyDir(server);
    await expect.poll(() => (existsSync(dir) ? readdirSync(dir) : []), { timeout: 20_000 }).toHaveLength(1);
    expect(await firstBoot(server)).toBe('took over a standby sandbox');
  }, 60_000);

  it('boots none with PADDOCK_STANDBY_SANDBOXES=0: the first thread boots a fresh sandbox', async () => {
    server = await startTestServer(database, { PADDOCK_STANDBY_SANDBOXES: '0' });
    expect(await firstBoot(server)).toBe('booted a fresh sandbox');
    // Nothing was ever booted as a standby, before the thread's boot or since.
    expect(existsSync(standbyDir(server))).toBe(false);
  }, 60_000);
});
