import type { ThreadEvent } from '@paddock/protocol';
import { testDatabases } from '@paddock/testing';
import { startTwoNodes, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allEvents, createIdleThread, json, settled } from './helpers.ts';

const postgres = testDatabases().find((database) => database.name === 'postgres');

/**
 * Issue 18: a client following a thread on one node sees, live, what another node stores: the turn
 * runs on one node (mostly A), and the stream on the other is checked. SQLite serves one node, so
 * this is PostgreSQL's.
 */
describe.skipIf(!postgres)('events across two server nodes', () => {
  let a: TestServer;
  let b: TestServer;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ a, b, close } = await startTwoNodes(postgres!.name === 'postgres' ? postgres!.adminUrl : '', {
      // B looks for queued turns at start and then only every ten minutes: a request to A mostly
      // queues a turn A runs.
      b: { PADDOCK_SWEEP_MS: '600000' },
    }));
  });
  afterAll(() => close?.());

  it('streams from one node every event of a turn the other runs, as it runs, on one connection', async () => {
    const threadId = await createIdleThread(a);
    const before = (await allEvents(a, threadId)).at(-1)?.seq ?? 0;
    // A stream on each node: the one on the node that does not run the turn is the one that counts
    // (B's sweep at start may still claim the turn on a loaded machine).
    const streams = new Map([
      [a, await openStream(a, threadId, a.token)],
      [b, await openStream(b, threadId, a.token)],
    ]);
    try {
      const sent = await json<{ run_started: boolean }>(
        await a.request('POST', `/v2/threads/${threadId}/messages`, {
          body: {
            messages: [{ content: '::sh for i in $(seq 1 20); do echo line $i; sleep 0.01; done' }],
            run: true,
          },
        }),
        201,
      );
      expect(sent.run_started).toBe(true);
      await streams.get(b)!.until((frames) => frames.some((f) => f.type === 'turn.ended'));
      // The turn ran on one node, in its sandbox; the other only streamed it.
      const [running, other] = a.paddock.services.sandboxes.isRunning(threadId) ? [a, b] : [b, a];
      expect(running.paddock.services.sandboxes.isRunning(threadId)).toBe(true);
      expect(other.paddock.services.sandboxes.isRunning(threadId)).toBe(false);
      // Once the thread settles, the stream holds everything stored after it opened, once, in order.
      await settled(a, threadId);
      const stored = (await allEvents(a, threadId)).filter((e) => e.seq > before);
      const frames = await streams.get(other)!.until((frames) => frames.at(-1)?.seq === stored.at(-1)!.seq);
      expect(frames.map((f) => f.seq)).toEqual(stored.map((e) => e.seq));
      expect(frames.map((f) => f.id)).toEqual(stored.map((e) => e.id));
      const types = frames.map((f) => f.type);
      for (const type of ['user.message', 'turn.started', 'tool_call.end', 'turn.ended'])
        expect(types).toContain(type);
      expect(frames.find((f) => f.type === 'tool_call.end')!.data.output).toContain('line 20');
    } finally {
      for (const stream of streams.values()) stream.close();
    }
  });
});

/** A thread's event stream on one HTTP connection, read frame by frame; it never reconnects. */
async function openStream(server: TestServer, threadId: string, token: string) {
  const controller = new AbortController();
  const response = await fetch(`${server.url}/v2/threads/${threadId}/events/stream`, {
    headers: { authorization: `Bearer ${token}` },
    signal: controller.signal,
  });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const frames: ThreadEvent[] = [];
  let buffer = '';
  let connected = false;
  // Reads until `done` holds for the frames so far (or 20 s pass); answers them.
  const until = async (done: (frames: ThreadEvent[]) => boolean): Promise<ThreadEvent[]> => {
    const timeout = setTimeout(() => controller.abort(), 20_000);
    try {
      while (!connected || !done(frames)) {
        const { value, done: ended } = await reader.read();
        if (ended) throw new Error(`the stream ended after ${frames.map((f) => f.type).join(', ')}`);
        buffer += decoder.decode(value, { stream: true });
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (block === ': connected') connected = true;
          const data = block.split('\n').find((line) => line.startsWith('data: '));
          if (data) frames.push(JSON.parse(data.slice('data: '.length)) as ThreadEvent);
        }
      }
      return frames;
    } catch (error) {
      if (controller.signal.aborted)
        throw new Error(`timed out; the stream had ${frames.map((f) => f.type).join(', ')}`);
      throw error;
    } finally {
      clearTimeout(timeout);
    }
  };
  await until(() => true);
  return { until, close: () => controller.abort() };
}
