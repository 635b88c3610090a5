import { randomUUID } from 'node:crypto';
import type { CodeRunResult, FileList, FileTransfer } from '@paddock/protocol';
import { findThread } from '@paddock/store';
import { testDatabases } from '@paddock/testing';
import { startTwoNodes, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { adminTokenWith, agentSpec, json, settled, transcript } from './helpers.ts';
import { transferWhen, tusUpload } from './upload-helpers.ts';

const postgres = testDatabases().find((database) => database.name === 'postgres');

/**
 * Issue 18 §3: a thread's workspace lives on one machine (here a node's own runner), and whichever
 * node a request reaches, the thread's turns run there and its files, uploads, code runs and
 * follow-ups are served there. Once that node is gone, the thread goes on where requests arrive.
 */
describe.skipIf(!postgres)("a thread's workspace across two server nodes", () => {
  let a: TestServer;
  let b: TestServer;
  let close: () => Promise<void>;
  beforeAll(async () => {
    const env = { PADDOCK_PRESENCE_MS: '250' };
    ({ a, b, close } = await startTwoNodes(postgres!.name === 'postgres' ? postgres!.adminUrl : '', {
      a: env,
      b: env,
    }));
  });
  afterAll(() => close?.());

  const input = (node: TestServer, threadId: string, content: string, headers?: Record<string, string>) =>
    node.request('POST', `/v2/tasks/${threadId}/inputs`, {
      body: { input_id: randomUUID(), messages: [{ content }] },
      headers,
    });
  /** The machine holding the thread's workspace, as `node` reads it. */
  const machineOf = async (threadId: string, node: TestServer) =>
    (await findThread(node.paddock.services.store.db, threadId))?.machine_id;
  /** The lease owner of the thread's running turn, once one runs: it names the node running it. */
  const runningOwner = (threadId: string, node: TestServer) =>
    vi.waitFor(
      async () => {
        const running = await node.paddock.services.store.db
          .selectFrom('turns')
          .select('lease_owner')
          .where('thread_id', '=', threadId)
          .where('status', '=', 'running')
          .executeTakeFirst();
        if (!running?.lease_owner) throw new Error('no turn of the thread runs');
        return running.lease_owner;
      },
      { timeout: 20_000, interval: 20 },
    );
  const ownedBy = (node: TestServer) => new RegExp(`^node:${node.paddock.services.nodeId}/`);

  it('runs its turns and serves its files, uploads, code runs and follow-ups on the node holding it', async () => {
    const { thread_id } = await json<{ thread_id: string }>(
      await a.request('POST', '/v2/threads', {
        body: { agent: agentSpec(), input: '::sh echo from the first turn > note.txt' },
      }),
      201,
    );
    await settled(a, thread_id);
    const machine = await machineOf(thread_id, a);
    const [home, other] = machine === a.paddock.services.nodeId ? [a, b] : [b, a];
    expect(machine).toBe(home.paddock.services.nodeId);

    // The other node has no workspace of the thread: what it answers comes from the home node.
    const listed = await json<FileList>(await other.request('GET', `/v2/tasks/${thread_id}/files`), 200);
    expect(listed.items.map((item) => item.name)).toContain('note.txt');
    const content = await other.request('GET', `/v2/tasks/${thread_id}/files/content?path=note.txt`);
    expect(content.status).toBe(200);
    expect(await content.text()).toBe('from the first turn\n');

    const data = Buffer.from('uploaded through the other node\n');
    const transfer = await json<FileTransfer>(
      await other.request('POST', `/v2/tasks/${thread_id}/files/uploads`, {
        body: { path: 'uploaded.txt', size_bytes: data.length },
      }),
      201,
    );
    // Signed for the node the client reached, which passes the parts on.
    expect(transfer.upload!.endpoint.startsWith(`${other.url}/`)).toBe(true);
    await tusUpload(transfer.upload!.endpoint, data);
    await transferWhen(other, thread_id, transfer.id, (t) => t.status === 'completed');

    const token = await adminTokenWith(other, ['read', 'publish', 'code:execute']);
    const ran = await json<CodeRunResult>(
      await other.request('POST', `/v2/tasks/${thread_id}/code/run/sync`, {
        body: { language: 'bash', code: 'cat note.txt uploaded.txt' },
        token,
      }),
      200,
    );
    expect(ran.stdout).toBe('from the first turn\nuploaded through the other node\n');

    // A follow-up through the other node runs in the same workspace, under the home node's lease.
    expect((await input(other, thread_id, '::sh sleep 1; cat uploaded.txt')).status).toBe(201);
    expect(await runningOwner(thread_id, other)).toMatch(ownedBy(home));
    await settled(other, thread_id);
    expect((await transcript(other, thread_id)).join('\n')).toContain('uploaded through the other node');

    // A turn queued on the other node itself (served there, as a schedule's would be): its worker
    // leaves it to the home node, which claims it.
    const queuedThere = await input(other, thread_id, '::sh sleep 1; cat note.txt', {
      'x-paddock-forwarded-by': 'this test',
    });
    expect(queuedThere.status).toBe(201);
    expect(await runningOwner(thread_id, other)).toMatch(ownedBy(home));
    await settled(other, thread_id);

    // The home node goes away (its presence with it): the thread goes on where requests arrive.
    await home.close();
    expect((await input(other, thread_id, '::sh sleep 1; echo on the node that is left')).status).toBe(201);
    expect(await runningOwner(thread_id, other)).toMatch(ownedBy(other));
    const thread = await settled(other, thread_id);
    expect(thread.status).toBe('idle');
    expect(await machineOf(thread_id, other)).toBe(other.paddock.services.nodeId);
    expect((await transcript(other, thread_id)).join('\n')).toContain('on the node that is left');
  }, 120_000);
});
