import { randomUUID } from 'node:crypto';
import { testDatabases } from '@paddock/testing';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminTokenWith, agentSpec, hostProcesses, json, settled, transcript } from './helpers.ts';

/** A `sleep` whose argument no other test uses, so its processes can be found from the host. */
const uniqueSleep = () => String(800_000 + Math.floor(Math.random() * 99_999));

async function waitFor(what: string, check: () => boolean): Promise<void> {
  await expect.poll(check, { message: what, timeout: 30_000, interval: 50 }).toBe(true);
}

describe.each(testDatabases())('Stop kills what the turn started on $name', (database) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(database);
  });
  afterAll(() => server.close());

  it('kills the turn backgrounded processes, not the entrypoint services nor a code run beside it', async () => {
    const [service, turn, code] = [uniqueSleep(), uniqueSleep(), uniqueSleep()];
    const detach = (seconds: string) => `setsid nohup sleep ${seconds} >/dev/null 2>&1 &`;
    // Backgrounded every way a tool can: its own session, nohup, a subshell, a double fork.
    const command = [
      `setsid sleep ${turn} >/dev/null 2>&1 &`,
      `nohup sleep ${turn} >/dev/null 2>&1 &`,
      `(sleep ${turn} >/dev/null 2>&1 &);`,
      `setsid sh -c 'sleep ${turn} >/dev/null 2>&1 & exit 0';`,
      `env -i sh -c 'setsid sleep ${turn} >/dev/null 2>&1 &';`,
      'sleep 1000',
    ].join(' ');
    const { thread_id: threadId } = await json<{ thread_id: string }>(
      await server.request('POST', '/v2/threads', {
        body: { agent: agentSpec({ entrypoint: detach(service) }), input: `::sh ${command}` },
      }),
      201,
    );
    await waitFor('the turn started its processes', () => hostProcesses(['sleep', turn]).length === 5);

    expect(hostProcesses(['sleep', service])).toHaveLength(1);

    // A code run beside the turn leaves a process of its own behind: no part of the turn.
    const runner = await adminTokenWith(server, ['read', 'publish', 'code:execute']);
    const ran = await server.request('POST', `/v2/tasks/${threadId}/code/run/sync`, {
      body: { language: 'bash', code: detach(code) },
      token: runner,
    });
    expect((await json<{ exit_code: number }>(ran, 200)).exit_code).toBe(0);
    // The run answers once its shell exits; the job it put in the background execs `sleep` a moment later.
    await waitFor('the code run started its process', () => hostProcesses(['sleep', code]).length === 1);

    await json(await server.request('POST', `/v2/threads/${threadId}/interrupt`, { body: {} }), 200);
    await settled(server, threadId);
    // SIGKILLed before the turn settled; a loaded machine may take a moment to reap them.
    await expect.poll(() => hostProcesses(['sleep', turn]), { timeout: 5_000, interval: 50 }).toEqual([]);
    expect(hostProcesses(['sleep', service])).toHaveLength(1);
    expect(hostProcesses(['sleep', code])).toHaveLength(1);

    // The sandbox still serves the next turn.
    await json(
      await server.request('POST', `/v2/tasks/${threadId}/inputs`, {
        body: { input_id: randomUUID(), messages: [{ content: '::sh echo still here' }] },
      }),
      201,
    );
    await settled(server, threadId);
    expect((await transcript(server, threadId)).at(-1)).toContain('still here');
  });
});
