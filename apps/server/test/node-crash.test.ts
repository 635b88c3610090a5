import { randomUUID } from 'node:crypto';
import type { ThreadEvent } from '@paddock/protocol';
import { testDatabases } from '@paddock/testing';
import { type NodeProcess, startNodes } from '@paddock/testing/nodes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentSpec, json, settled, transcript } from './helpers.ts';

const postgres = testDatabases().find((database) => database.name === 'postgres');

/**
 * Issue 18 §5: two server nodes on one PostgreSQL database, each its own process. The node running
 * a turn is killed with SIGKILL while it runs it and while a burst of inputs goes to it; a client
 * retries each input it got no answer for on the other node, with the same `input_id`, as the spec
 * tells it to. Every acknowledged input ends in the transcript exactly once, the thread is not left
 * running, and a stream on the other node sees every event in order, without a gap, on one
 * connection. The thread is made through A, but either node may claim its turn (on a loaded
 * machine B's first sweep can be first), so the test acts through whichever runs it.
 */
describe.skipIf(!postgres)('a node killed mid-turn and mid-burst', () => {
  let a: NodeProcess;
  let b: NodeProcess;
  let close: () => Promise<void>;
  let output: () => string;
  let query: Awaited<ReturnType<typeof startNodes>>['query'];
  beforeAll(async () => {
    // A short lease, sweep and presence: the node that lives on settles what the other held, and
    // takes its threads, soon after it is gone.
    const env = { PADDOCK_LEASE_TTL_MS: '3000', PADDOCK_SWEEP_MS: '200', PADDOCK_PRESENCE_MS: '500' };
    ({
      nodes: [a, b],
      close,
      output,
      query,
    } = await startNodes(postgres!.name === 'postgres' ? postgres!.adminUrl : '', [
      { name: 'a', env },
      { name: 'b', env },
    ]));
  }, 120_000);
  afterAll(() => close?.());

  it('keeps every acknowledged input exactly once, leaves nothing running, and the other node streams without a gap', async () => {
    const { thread_id } = await json<{ thread_id: string }>(
      await a.request('POST', '/v2/threads', { body: { agent: agentSpec(), input: '::sh sleep 30' } }),
      201,
    );
    await waitFor(async () => {
      const page = await json<{ items: ThreadEvent[] }>(
        await b.request('GET', `/v2/threads/${thread_id}/events?limit=100`),
        200,
      );
      return page.items.some((e) => e.type === 'tool_call.start');
    });
    // The node whose lease the running turn holds is the one to kill.
    const [running] = await query<{ lease_owner: string }>(
      "select lease_owner from turns where thread_id = $1 and status = 'running'",
      [thread_id],
    );
    expect(running?.lease_owner).toMatch(new RegExp(`^node:(${a.nodeId()}|${b.nodeId()})/`));
    const [owner, other] = running!.lease_owner.startsWith(`node:${a.nodeId()}/`) ? [a, b] : [b, a];
    // From the thread's first event, on one connection to the node that lives on.
    const stream = followOn(other, thread_id);

    const inputs = Array.from({ length: 20 }, (_, i) => ({ id: randomUUID(), content: `burst input ${i}` }));
    const send = (node: NodeProcess, input: { id: string; content: string }) =>
      node.request('POST', `/v2/tasks/${thread_id}/inputs`, {
        body: { input_id: input.id, messages: [{ content: input.content }] },
      });
    // The burst goes to the owner, which dies in the middle of it, once it has acknowledged a few
    // (however slow the machine), with the rest still to be sent or on their way.
    let acknowledged = 0;
    const answers = inputs.map((input, i) =>
      new Promise((r) => setTimeout(r, i * 25))
        .then(() => send(owner, input))
        .then(
          (response) => {
            if (response.status === 201) acknowledged++;
            return response.status;
          },
          () => undefined,
        ),
    );
    await waitFor(async () => acknowledged >= 3);
    await owner.kill('SIGKILL');
    const statuses = await Promise.all(answers);
    // Some inputs the owner acknowledged before it died, some it never answered.
    expect(statuses.filter((s) => s === 201).length, output()).toBeGreaterThan(0);
    expect(statuses.filter((s) => s === undefined).length, output()).toBeGreaterThan(0);
    // Whatever the owner did not answer, the client sends again to the other node (the same
    // input_id: never doubled), retrying as the spec says: until the owner's presence lapses the
    // other still takes it for the thread's node and answers 503 (after its Retry-After); then, until
    // it settles the turn the dead lease left, 409 `task is busy (active run lease)`.
    const resend = async (input: { id: string; content: string }): Promise<number> => {
      for (;;) {
        const response = await send(other, input);
        if (response.status === 503)
          await new Promise((r) => setTimeout(r, Number(response.headers.get('retry-after')) * 1000));
        else if (response.status === 409 && (await response.text()).includes('active run lease'))
          await new Promise((r) => setTimeout(r, 200));
        else return response.status;
      }
    };
    for (const [i, input] of inputs.entries())
      if (statuses[i] !== 201) expect([200, 201]).toContain(await resend(input));

    const thread = await settled(other, thread_id, 90_000);
    expect(thread.status).not.toBe('running');
    const said = await transcript(other, thread_id);
    for (const input of inputs)
      expect(
        said.filter((m) => m === input.content),
        input.content,
      ).toHaveLength(1);

    const stored = await json<{ items: ThreadEvent[] }>(
      await other.request('GET', `/v2/threads/${thread_id}/events?limit=1000`),
      200,
    );
    const last = stored.items.at(-1)!.seq;
    const seen = await stream.until(last);
    expect(seen).toEqual(stored.items.map((e) => e.seq));
    stream.close();
  }, 180_000);
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The thread's events on one connection to `node`, from its first; `until` waits for a seq. */
function followOn(node: NodeProcess, threadId: string) {
  const controller = new AbortController();
  const seqs: number[] = [];
  const reading = (async () => {
    const response = await node.request('GET', `/v2/threads/${threadId}/events/stream`, {
      headers: { 'last-event-id': '0' },
    });
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    controller.signal.addEventListener('abort', () => void reader.cancel().catch(() => {}));
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const id = /^id: (\d+)$/m.exec(buffer.slice(0, end))?.[1];
        buffer = buffer.slice(end + 2);
        if (id) seqs.push(Number(id));
      }
    }
  })();
  return {
    async until(seq: number): Promise<number[]> {
      await waitFor(async () => (seqs.at(-1) ?? 0) >= seq, 30_000).catch(() => {
        throw new Error(`the stream on ${node.name} stopped at ${seqs.at(-1)}, short of ${seq}`);
      });
      return [...seqs];
    },
    close() {
      controller.abort();
      void reading.catch(() => {});
    },
  };
}
