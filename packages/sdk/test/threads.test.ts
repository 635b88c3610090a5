import { randomUUID } from 'node:crypto';
import { createClient, type PaddockClient, PaddockError } from '@paddock/sdk';
import { testDatabases } from '@paddock/testing';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agent, droppingFetch, expectedSeqs, untilIdle } from './helpers.ts';

describe.each(testDatabases().slice(0, 1))('the SDK against a server on $name', (database) => {
  let server: TestServer;
  let client: PaddockClient;
  beforeAll(async () => {
    server = await startTestServer(database);
    client = createClient({ baseUrl: server.url, token: server.token });
  });
  afterAll(() => server.close());

  it('creates a thread and streams its first turn to idle, every event once and in order', async () => {
    const handle = await client.threads.create({ agent, input: '::sh echo from-the-sdk' });
    expect(handle.status).toBe('running');
    const events = await untilIdle(client, handle.thread_id);
    expect(events.map((e) => e.seq)).toEqual(expectedSeqs(events));
    expect(events.map((e) => e.type)).toEqual(
      expect.arrayContaining(['user.message', 'turn.started', 'tool_call.end', 'assistant.message', 'idle']),
    );
    expect(events.every((e) => e.thread_id === handle.thread_id)).toBe(true);
    expect(events.at(-1)!.data).toMatchObject({ status: 'idle' });
    const thread = await client.threads.get(handle.thread_id);
    expect(thread).toMatchObject({ id: handle.thread_id, agent_id: handle.agent_id, status: 'idle' });
    const transcript = await client.threads.messages(handle.thread_id);
    expect(transcript.items.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(transcript.items[1]!.content).toContain('from-the-sdk');
    const page = await client.threads.events(handle.thread_id, { after: 0, limit: 1000 });
    expect(page.items.map((e) => e.seq)).toEqual(events.map((e) => e.seq));
    // Listing and reading the workspace go through the same client.
    const files = await client.files.list(handle.thread_id);
    expect(files.path).toBe('.');
    const tree = await client.files.tree(handle.thread_id, { max_depth: 1 });
    expect(tree.is_dir).toBe(true);
    const fetched = await client.agents.get(handle.agent_id);
    expect(fetched.instructions).toBe(agent.instructions);
    const patched = await client.agents.update(handle.agent_id, { title: 'Renamed by the SDK' });
    expect(patched.title).toBe('Renamed by the SDK');
  });

  it('retries a follow-up whose answer was lost with the same input_id: it lands once', async () => {
    const dropping = droppingFetch((url, init) => init?.method === 'POST' && url.endsWith('/inputs'));
    const flaky = createClient({
      baseUrl: server.url,
      token: server.token,
      fetch: dropping.fetch,
      retry: { baseDelayMs: 10 },
    });
    const { thread_id } = await flaky.threads.create({ agent });
    const answer = await flaky.tasks.sendInput(thread_id, { messages: 'only once, please' });
    expect(answer.replayed).toBe(true);
    expect(dropping.sent).toHaveLength(2);
    const [first, second] = dropping.sent.map((s) => JSON.parse(s.body!) as { input_id: string });
    expect(second!.input_id).toBe(first!.input_id);
    expect(answer.input.id).toBe(first!.input_id);
    await untilIdle(flaky, thread_id);
    const transcript = await flaky.threads.messages(thread_id);
    expect(transcript.items.filter((m) => m.content === 'only once, please')).toHaveLength(1);
    expect((await flaky.tasks.inputs(thread_id)).items).toHaveLength(1);
    // Where the stream stands before the input: its turn may settle before the answer is read.
    const before = (await flaky.threads.events(thread_id)).items.at(-1)!.seq;
    const write = await flaky.tasks.sendInput(thread_id, { messages: '::write note.txt\nhello file\n::end' });
    expect(write.replayed).toBe(false);
    await untilIdle(flaky, thread_id, { after: before });
    expect(new TextDecoder().decode(await flaky.files.read(thread_id, 'note.txt'))).toContain('hello file');
  });

  it('stops a running turn, retrying a lost Stop with the same expected_generation', async () => {
    const { thread_id } = await client.threads.create({ agent, input: '::sleep 20000\nnever answered' });
    for await (const event of client.threads.stream(thread_id, {
      after: 0,
      signal: AbortSignal.timeout(15_000),
    })) {
      if (event.type === 'turn.started') break;
    }
    const dropping = droppingFetch((url, init) => init?.method === 'POST' && url.endsWith('/interrupt'));
    const stopper = createClient({ baseUrl: server.url, token: server.token, fetch: dropping.fetch });
    const record = await stopper.threads.interrupt(thread_id);
    expect(record.id).toBe(thread_id);
    expect(dropping.sent).toHaveLength(2);
    expect(dropping.sent[1]!.body).toBe(dropping.sent[0]!.body);
    expect(JSON.parse(dropping.sent[0]!.body!)).toHaveProperty('expected_generation');
    const events = await untilIdle(client, thread_id);
    expect(events.find((e) => e.type === 'turn.ended')!.data).toEqual({ stop_reason: 'cancelled' });
    // The same Stop again answers the same record (D11).
    const expected = JSON.parse(dropping.sent[0]!.body!).expected_generation as number;
    const again = await client.tasks.interrupt(thread_id, { expectedGeneration: expected });
    expect(again.generation).toBe(record.generation);
  });

  it('resumes a stream cut mid-way with Last-Event-ID: no gap, no duplicate', async () => {
    const connections: (string | null)[] = [];
    const cutting: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (!String(input).includes('/events/stream')) return response;
      connections.push(new Headers(init?.headers).get('last-event-id'));
      if (connections.length > 1) return response;
      // The first connection breaks after the first frame that carries an event.
      let frames = 0;
      const body = response.body!.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, controller) {
            if (frames > 0) return controller.error(new TypeError('terminated: other side closed'));
            if (new TextDecoder().decode(chunk).includes('\nevent: ')) frames++;
            controller.enqueue(chunk);
          },
        }),
      );
      return new Response(body, { status: response.status, headers: response.headers });
    };
    const resuming = createClient({ baseUrl: server.url, token: server.token, fetch: cutting });
    const { thread_id } = await client.threads.create({
      agent,
      input: '::sleep 1000\n::sh echo after the cut',
    });
    const events = await untilIdle(resuming, thread_id);
    expect(connections.length).toBeGreaterThanOrEqual(2);
    expect(connections[0]).toBe('0');
    expect(Number(connections[1])).toBeGreaterThan(0);
    expect(events.map((e) => e.seq)).toEqual(expectedSeqs(events));
    const stored = await client.threads.events(thread_id, { limit: 1000 });
    expect(events.map((e) => e.id)).toEqual(stored.items.map((e) => e.id));
  });

  it('reconnects a stream that goes silent past the keepalive timeout', async () => {
    let opened = 0;
    const stalling: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (!String(input).includes('/events/stream') || opened++ > 0) return response;
      // Bytes stop after the first chunk, yet the connection stays open.
      const reader = response.body!.getReader();
      const first = await reader.read();
      init?.signal?.addEventListener('abort', () => void reader.cancel().catch(() => {}));
      const body = new ReadableStream<Uint8Array>({
        start: (controller) => controller.enqueue(first.value!),
        pull: () => new Promise(() => {}),
      });
      return new Response(body, { status: response.status, headers: response.headers });
    };
    const watching = createClient({ baseUrl: server.url, token: server.token, fetch: stalling });
    const { thread_id } = await client.threads.create({ agent, input: 'hello keepalive' });
    const started = Date.now();
    const events = await untilIdle(watching, thread_id, { keepaliveTimeoutMs: 500 });
    expect(opened).toBeGreaterThanOrEqual(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(500);
    expect(events.map((e) => e.seq)).toEqual(expectedSeqs(events));
  });

  it("types the service's errors: code, status, retryable, detail; the do-not-retry ones go once", async () => {
    const missing = await client.threads.get(randomUUID()).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(PaddockError);
    expect(missing).toMatchObject({ code: 'thread_not_found', status: 404, retryable: false });
    expect((missing as PaddockError).message).toBe('Thread not found');

    const stranger = createClient({ baseUrl: server.url, token: 'pdk_pat_nobody' });
    await expect(stranger.threads.get(randomUUID())).rejects.toMatchObject({
      code: 'invalid_token',
      status: 401,
    });

    const invalid = (await client.threads
      .create({ agent: { harness: 'no_such_harness' as 'coding_alpha' } })
      .catch((e: unknown) => e)) as PaddockError;
    expect(invalid).toMatchObject({ code: 'validation', status: 422, retryable: false });
    expect(Array.isArray(invalid.detail)).toBe(true);

    let sends = 0;
    const counting = createClient({
      baseUrl: server.url,
      token: server.token,
      fetch: (input, init) => {
        if (String(input).endsWith('/inputs')) sends++;
        return fetch(input, init);
      },
    });
    const { thread_id } = await counting.threads.create({ agent });
    const input_id = randomUUID();
    await counting.tasks.sendInput(thread_id, { input_id, messages: 'first' });
    const reused = (await counting.tasks
      .sendInput(thread_id, { input_id, messages: 'something else' })
      .catch((e: unknown) => e)) as PaddockError;
    expect(reused).toMatchObject({ code: 'idempotency_key_reused', status: 409, retryable: false });
    expect(reused.detail).toMatchObject({ code: 'idempotency_key_reused' });
    expect(sends).toBe(2);
    await untilIdle(client, thread_id);
  });
});
