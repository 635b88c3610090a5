import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testDatabases } from '@paddock/testing';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminTokenWith,
  agentSpec,
  allEvents,
  answerWhen,
  hostProcesses,
  json,
  settled,
  transcript,
} from './helpers.ts';

describe.each(testDatabases())('sandboxes that sleep or expire on $name', (database) => {
  let server: TestServer;
  beforeAll(async () => {
    const config = join(mkdtempSync(join(tmpdir(), 'paddock-config-')), 'paddock.yaml');
    writeFileSync(config, 'providers:\n  sandbox_c: { enabled: true }\n  sandbox_d: { enabled: true }\n');
    server = await startTestServer(database, {
      PADDOCK_CONFIG: config,
      PADDOCK_SANDBOX_IDLE_MS: '600',
      PADDOCK_SANDBOX_IDLE_STOP_MS: '1500',
      // Long enough that a loaded machine boots the sandbox and starts the turn well within it.
      PADDOCK_SANDBOX_MAX_LIFETIME_MS: '5000',
    });
  });
  afterAll(() => server.close());

  async function threadOn(machineKind: string, input: string) {
    const { thread_id } = await json<{ thread_id: string }>(
      await server.request('POST', '/v2/threads', {
        body: { agent: agentSpec({ machine_kind: machineKind }), input },
      }),
      201,
    );
    return thread_id;
  }
  const statuses = async (threadId: string) =>
    (await allEvents(server, threadId))
      .filter((e) => e.type === 'sandbox.status')
      .map((e) => (e.data as { status: string }).status);

  // Two boots of a sandbox: on a loaded machine (a CI run) the first took over 20 s.
  it('sandbox_c sleeps when idle, then wakes on a file read (machine_not_ready meanwhile) with its workspace intact', async () => {
    const threadId = await threadOn('sandbox_c', '::sh echo kept > kept.txt');
    await settled(server, threadId, 60_000);
    await expect.poll(() => statuses(threadId), { timeout: 10_000 }).toContain('stopped');
    // Frozen first, then stopped; the workspace stays.
    expect(await statuses(threadId)).toEqual(['starting', 'running', 'sleeping', 'stopped']);

    const waking = await server.request('GET', `/v2/tasks/${threadId}/files`);
    expect((await json<{ detail: { code: string } }>(waking, 409)).detail.code).toBe('machine_not_ready');
    expect(waking.headers.get('retry-after')).toBe('1');
    const listed = await answerWhen(
      () => server.request('GET', `/v2/tasks/${threadId}/files`),
      (status) => status === 200,
      10_000,
    );
    const files = await json<{ items: { name: string }[] }>(listed, 200);
    expect(files.items.map((f) => f.name)).toContain('kept.txt');

    // The next input runs in the woken sandbox, which still has the file.
    await json(
      await server.request('POST', `/v2/tasks/${threadId}/inputs`, {
        body: { input_id: crypto.randomUUID(), messages: [{ content: '::sh cat kept.txt' }] },
      }),
      201,
    );
    await settled(server, threadId, 60_000);
    expect((await transcript(server, threadId)).join('\n')).toContain('kept');
  }, 120_000);

  it('sandbox_d ends at its lifetime: the turn it cuts off fails, and the task does not resume', async () => {
    const threadId = await threadOn('sandbox_d', '::sh sleep 30');
    const thread = await settled(server, threadId, 15_000);
    expect(thread.status).toBe('fail');
    const error = (await allEvents(server, threadId)).find((e) => e.type === 'error');
    expect(error?.data).toMatchObject({ code: 'sandbox_expired' });

    const input = await server.request('POST', `/v2/tasks/${threadId}/inputs`, {
      body: { input_id: crypto.randomUUID(), messages: [{ content: 'still there?' }] },
    });
    expect((await json<{ detail: { code: string } }>(input, 409)).detail.code).toBe(
      'task_terminal_no_machine',
    );
    const read = await server.request('GET', `/v2/tasks/${threadId}/files`);
    expect((await json<{ detail: { code: string } }>(read, 409)).detail.code).toBe(
      'task_terminal_no_machine',
    );
    expect(read.headers.get('retry-after')).toBeNull();
    const inputs = await json<{ items: unknown[] }>(
      await server.request('GET', `/v2/tasks/${threadId}/inputs`),
      200,
    );
    expect(inputs.items).toHaveLength(1);
  });

  it('stops an idle sandbox_a sandbox (its processes gone, workspace kept); a file read, a code run and a turn each boot it again', async () => {
    // A marker no other test's process carries, to find the sandbox's processes from the host.
    const marker = String(900_000 + Math.floor(Math.random() * 99_999));
    const threadId = await threadOn(
      'sandbox_a',
      `::sh echo kept > kept.txt; nohup sleep ${marker} >/dev/null 2>&1 &`,
    );
    await settled(server, threadId);
    expect(hostProcesses(['sleep', marker])).not.toHaveLength(0);
    // Status events go to a turn's stream; a boot a read or a code run started has none, so ask the host.
    const stopped = async () => {
      const { sandboxes } = server.paddock.services;
      await expect.poll(() => sandboxes.isRunning(threadId), { timeout: 10_000 }).toBe(false);
    };
    await expect.poll(() => statuses(threadId), { timeout: 10_000 }).toContain('stopped');
    expect(await statuses(threadId)).toEqual(['starting', 'running', 'stopped']);
    expect(hostProcesses(['sleep', marker])).toEqual([]);

    // A file read wakes it: 409 machine_not_ready while it boots, then the kept workspace.
    const waking = await server.request('GET', `/v2/tasks/${threadId}/files`);
    expect((await json<{ detail: { code: string } }>(waking, 409)).detail.code).toBe('machine_not_ready');
    const listed = await answerWhen(
      () => server.request('GET', `/v2/tasks/${threadId}/files`),
      (status) => status === 200,
      10_000,
    );
    const files = await json<{ items: { name: string }[] }>(listed, 200);
    expect(files.items.map((f) => f.name)).toContain('kept.txt');

    // Idle again: stopped again; a code run boots it and runs in the kept workspace.
    await stopped();
    const runner = await adminTokenWith(server, ['read', 'publish', 'code:execute']);
    const run = await json<{ exit_code: number; stdout: string }>(
      await server.request('POST', `/v2/tasks/${threadId}/code/run/sync`, {
        body: { language: 'bash', code: 'cat kept.txt' },
        token: runner,
      }),
      200,
    );
    expect(run).toMatchObject({ exit_code: 0, stdout: 'kept\n' });

    // And once more: the next turn boots it.
    await stopped();
    await json(
      await server.request('POST', `/v2/tasks/${threadId}/inputs`, {
        body: { input_id: crypto.randomUUID(), messages: [{ content: '::sh cat kept.txt' }] },
      }),
      201,
    );
    await settled(server, threadId);
    const said = await transcript(server, threadId);
    expect(said.slice(said.indexOf('::sh cat kept.txt') + 1).join('\n')).toContain('kept');
    expect(server.paddock.services.sandboxes.isRunning(threadId)).toBe(true);
  });
});
