import { randomBytes, randomUUID } from 'node:crypto';
import type { ThreadEvent } from '@paddock/protocol';
import { testDatabases } from '@paddock/testing';
import { failoverProxy, type NodeProcess, startNodes } from '@paddock/testing/nodes';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { agentSpec, json, settled, transcript } from './helpers.ts';

const postgres = testDatabases().find((database) => database.name === 'postgres');

/**
 * Issue 18 §3: detached runners on two server nodes. A runner reaches the nodes through a balancer;
 * a turn of a thread on a runner connected to node A runs there, whichever node took the request.
 * When A dies, the runner reconnects through the balancer to B, which adopts the running turn: its
 * events go on with no gap, and the thread's next turns run in the same sandbox through B.
 */
describe.skipIf(!postgres)('detached runners across two server nodes', () => {
  let a: NodeProcess;
  let b: NodeProcess;
  let nodes: Awaited<ReturnType<typeof startNodes>>;
  let balancer: Awaited<ReturnType<typeof failoverProxy>>;
  beforeAll(async () => {
    const env = {
      PADDOCK_RUNNER: 'detached',
      PADDOCK_RUNNER_TOKEN: randomBytes(24).toString('hex'),
      PADDOCK_PRESENCE_MS: '300',
      PADDOCK_SANDBOX: process.env.PADDOCK_TEST_SANDBOX ?? 'auto',
    };
    nodes = await startNodes(postgres!.name === 'postgres' ? postgres!.adminUrl : '', [
      { name: 'a', env },
      { name: 'b', env },
    ]);
    [a, b] = nodes.nodes as [NodeProcess, NodeProcess];
    balancer = await failoverProxy([a.url, b.url]);
    // The runner shares A's data dir (its workspaces), and reaches the nodes through the balancer.
    nodes.startRunner('runner', {
      ...env,
      PADDOCK_DATA_DIR: a.dataDir,
      PADDOCK_SERVER_URL: balancer.url,
    });
    // Connected, and A has told the other nodes so.
    await vi.waitFor(
      async () => {
        const runners = await nodes.query("select node_id from machines where kind = 'runner'");
        if (runners.length === 0) throw new Error('no node reaches a runner yet');
      },
      { timeout: 30_000, interval: 100 },
    );
  }, 120_000);
  afterAll(async () => {
    await nodes?.close();
    await balancer?.close();
  });

  const leaseOf = async (threadId: string) =>
    vi.waitFor(
      async () => {
        const [running] = await nodes.query<{ lease_owner: string }>(
          "select lease_owner from turns where thread_id = $1 and status = 'running'",
          [threadId],
        );
        if (!running) throw new Error('no turn of the thread runs');
        return running.lease_owner;
      },
      { timeout: 30_000, interval: 50 },
    );

  it('runs a thread’s turns on its runner from either node, and B adopts them when A dies', async () => {
    // Made through B, which has no runner: A, which has, runs the turn.
    const { thread_id } = await json<{ thread_id: string }>(
      await b.request('POST', '/v2/threads', {
        body: { agent: agentSpec(), input: '::sh echo before > kept.txt; sleep 4; echo survived' },
      }),
      201,
    );
    expect(await leaseOf(thread_id)).toMatch(new RegExp(`^node:${a.nodeId()}/`));
    await vi.waitFor(
      async () => {
        const page = await json<{ items: ThreadEvent[] }>(
          await b.request('GET', `/v2/threads/${thread_id}/events?limit=100`),
          200,
        );
        if (!page.items.some((e) => e.type === 'tool_call.start')) throw new Error('no tool call yet');
      },
      { timeout: 30_000, interval: 50 },
    );

    await a.kill('SIGKILL');
    const thread = await settled(b, thread_id, 60_000);
    expect(thread.status, nodes.output()).toBe('idle');
    await vi.waitFor(() => expect(nodes.output()).toMatch(/\[b\] .*"msg":"adopted a running turn"/), {
      timeout: 5_000,
    });
    const events = await json<{ items: ThreadEvent[] }>(
      await b.request('GET', `/v2/threads/${thread_id}/events?limit=1000`),
      200,
    );
    const seqs = events.items.map((e) => e.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    expect(events.items.filter((e) => e.type === 'turn.started')).toHaveLength(1);
    expect(events.items.find((e) => e.type === 'turn.ended')?.data).toEqual({ stop_reason: 'end_turn' });
    expect((await transcript(b, thread_id)).join('\n')).toContain('survived');

    // The next turn runs through B, on the same runner, in the same workspace.
    const input = await b.request('POST', `/v2/tasks/${thread_id}/inputs`, {
      body: { input_id: randomUUID(), messages: [{ content: '::sh sleep 1; cat kept.txt' }] },
    });
    expect(input.status).toBe(201);
    expect(await leaseOf(thread_id)).toMatch(new RegExp(`^node:${b.nodeId()}/`));
    await settled(b, thread_id, 30_000);
    expect((await transcript(b, thread_id)).at(-1)).toContain('before');
  }, 180_000);
});
