import { testDatabases } from '@paddock/testing';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { strangerToken } from './control-plane-helpers.ts';
import { agentSpec, allEvents, json, settled, shape, transcript, turnStarted } from './helpers.ts';

describe.each(testDatabases())('threads on $name', (database) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(database);
  });
  afterAll(() => server.close());

  it('runs a first turn end to end in the sandbox: entrypoint, secrets, tool call, reply, settle', async () => {
    const created = await json<{ thread_id: string; agent_id: string; status: string }>(
      await server.request('POST', '/v2/threads', {
        body: {
          agent: agentSpec({ entrypoint: 'echo hi > /workspace/boot.txt', secrets: { GREETING: 'hello' } }),
          input: '::sh echo $GREETING && cat boot.txt',
        },
      }),
      201,
    );
    expect(created.status).toBe('running');
    const thread = await settled(server, created.thread_id);
    expect(thread.status).toBe('idle');
    expect(thread.title).toBe('::sh echo $GREETING && cat boot.txt');

    const events = await allEvents(server, created.thread_id);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    // The gateway stores a model call's `usage` when the call ends, which may fall between chunks.
    const types = shape(
      events.filter((e) => !['sandbox.status', 'entrypoint.output', 'usage'].includes(e.type)),
    );
    expect(types).toEqual([
      'user.message',
      'turn.started',
      'tool_call.start',
      'tool_call.end',
      'assistant.message.chunk',
      'assistant.message',
      'turn.ended',
      'idle',
    ]);
    const end = events.find((e) => e.type === 'tool_call.end')!;
    expect(end.data).toMatchObject({ status: 'ok', exit_code: 0 });
    expect(end.data.output).toContain('hello\nhi');
    expect(events.find((e) => e.type === 'tool_call.start')!.tool_id).toBe(end.tool_id);
    expect(events.some((e) => e.type === 'entrypoint.output' && e.data.exit_code === 0)).toBe(true);
    expect(events.at(-1)!.data).toMatchObject({ status: 'idle' });
    // The secret reaches the sandbox (the command above echoed it) but is stored only encrypted.
    const stored = await server.paddock.services.store.db
      .selectFrom('agents')
      .select('secrets_enc')
      .where('id', '=', created.agent_id)
      .executeTakeFirstOrThrow();
    expect(stored.secrets_enc).toMatch(/^v1:/);
    expect(stored.secrets_enc).not.toContain('hello');
    expect(JSON.stringify(events.filter((e) => e.type === 'sandbox.status'))).not.toContain('hello');

    const transcript = await json<{
      items: { id: string; role: string; content: string; metadata?: { model?: string } }[];
    }>(await server.request('GET', `/v2/threads/${created.thread_id}/messages`), 200);
    expect(transcript.items.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(transcript.items[1]!.metadata?.model).toBe('scripted');
    expect(transcript.items[1]!.content).toContain('hello');
    // The reply's event names the transcript's message.
    const reply = events.find((e) => e.type === 'assistant.message')!;
    expect(reply.data).toMatchObject({
      message_id: transcript.items[1]!.id,
      content: transcript.items[1]!.content,
    });
  });

  it('continues a thread with a follow-up in the same workspace and conversation', async () => {
    const { thread_id } = await json<{ thread_id: string }>(
      await server.request('POST', '/v2/threads', {
        body: { agent: agentSpec(), input: '::sh echo one > note.txt' },
      }),
      201,
    );
    await settled(server, thread_id);
    const appended = await json<{ messages: { id: string; role: string }[]; run_started: boolean }>(
      await server.request('POST', `/v2/threads/${thread_id}/messages`, {
        body: { messages: [{ content: '::sh cat note.txt' }], run: true },
      }),
      201,
    );
    expect(appended.run_started).toBe(true);
    expect(appended.messages[0]!.role).toBe('user');
    await settled(server, thread_id);
    const events = await allEvents(server, thread_id);
    expect(events.filter((e) => e.type === 'turn.started')).toHaveLength(2);
    expect(events.filter((e) => e.type === 'idle')).toHaveLength(2);
    const outputs = events.filter((e) => e.type === 'tool_call.end').map((e) => e.data.output);
    expect(outputs[1]).toContain('one');
    const transcript = await json<{ items: { role: string; content: string }[] }>(
      await server.request('GET', `/v2/threads/${thread_id}/messages`),
      200,
    );
    expect(transcript.items.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(transcript.items[2]!.content).toBe('::sh cat note.txt');

    // A third turn's model is sent the turns before it (D8 `::seen`); the message itself is not searched.
    await json(
      await server.request('POST', `/v2/threads/${thread_id}/messages`, {
        body: { messages: [{ content: '::seen echo one > note.txt\n::seen never-sent-before' }], run: true },
      }),
      201,
    );
    await settled(server, thread_id);
    const third = await json<{ items: { role: string; content: string }[] }>(
      await server.request('GET', `/v2/threads/${thread_id}/messages`),
      200,
    );
    expect(third.items.at(-1)).toMatchObject({ role: 'assistant', content: 'seen: yes\nseen: no' });
  });

  it('appends without running; follow-ups behind a waiting message take the next turn, in order', async () => {
    const { thread_id } = await json<{ thread_id: string }>(
      await server.request('POST', '/v2/threads', { body: { agent: agentSpec() } }),
      201,
    );
    const append = (content: string, run?: boolean) =>
      server.request('POST', `/v2/threads/${thread_id}/messages`, { body: { messages: [{ content }], run } });
    expect((await json<{ run_started: boolean }>(await append('note'), 201)).run_started).toBe(false);
    expect(
      (await json<{ run_started: boolean }>(await append('::sleep 400\nwaiting', true), 201)).run_started,
    ).toBe(true);
    await turnStarted(server, thread_id);
    // Without `run` during a turn, a message waits for the next turn; a follow-up never overtakes it.
    expect((await json<{ run_started: boolean }>(await append('held'), 201)).run_started).toBe(false);
    expect(
      (await json<{ run_started: boolean }>(await append('after the sleep', true), 201)).run_started,
    ).toBe(false);
    await settled(server, thread_id);
    const events = await allEvents(server, thread_id);
    expect(events.filter((e) => e.type === 'turn.started')).toHaveLength(2);
    const firstIdle = events.find((e) => e.type === 'idle')!.seq;
    const later = events
      .filter((e) => e.type === 'user.message' && e.seq > firstIdle)
      .map((e) => e.data.content);
    expect(later).toEqual(['held', 'after the sleep']);
    expect(await transcript(server, thread_id)).toEqual([
      'note',
      '::sleep 400\nwaiting',
      'You said: waiting',
      'held',
      'after the sleep',
      'You said: after the sleep',
    ]);
  });

  it("lists the caller's threads newest first, by agent and status, a page at a time", async () => {
    const create = async (instructions: string) =>
      json<{ thread_id: string; agent_id: string; status: string }>(
        await server.request('POST', '/v2/threads', { body: { agent: agentSpec({ instructions }) } }),
        201,
      );
    const mine = `lister ${Math.random()}`;
    const first = await create(mine);
    const second = await create(mine);
    const third = await create(mine);
    const other = await create(`${mine} too`);
    expect(new Set([first, second, third].map((h) => h.agent_id)).size).toBe(1);
    type Page = { items: { id: string; agent_id: string; status: string }[]; next_cursor: string | null };
    const list = async (query: string, token?: string) =>
      json<Page>(await server.request('GET', `/v2/threads?${query}`, { token }), 200);

    const one = await list(`agent_id=${first.agent_id}&limit=2`);
    expect(one.items.map((t) => t.id)).toEqual([third.thread_id, second.thread_id]);
    const two = await list(`agent_id=${first.agent_id}&limit=2&cursor=${one.next_cursor}`);
    expect(two).toEqual({ items: [expect.objectContaining({ id: first.thread_id })], next_cursor: null });
    // Without an agent: every thread of the caller's teams, the other agent's among them.
    const all = (await list('limit=200')).items.map((t) => t.id);
    expect(all.indexOf(other.thread_id)).toBeLessThan(all.indexOf(third.thread_id));
    expect(all).toContain(first.thread_id);
    const status = first.status;
    expect((await list(`agent_id=${first.agent_id}&status=${status}`)).items).toHaveLength(3);
    const otherStatus = status === 'running' ? 'success' : 'running';
    expect((await list(`agent_id=${first.agent_id}&status=${otherStatus}`)).items).toEqual([]);

    const bad = await server.request('GET', '/v2/threads?cursor=nonsense');
    expect((await json<{ detail: { loc: string[] }[] }>(bad, 422)).detail[0]!.loc).toEqual([
      'query',
      'cursor',
    ]);
    expect((await server.request('GET', '/v2/threads?limit=0')).status).toBe(422);
    // Another organization's user sees none of them.
    const { token } = await strangerToken(server);
    expect((await list('limit=200', token)).items.map((t) => t.id)).not.toContain(first.thread_id);
  });

  it('reuses the agent for an identical spec and makes a new one for any difference', async () => {
    const spec = agentSpec({ secrets: { KEY: 'v1' }, title: 'Reuse' });
    const a = await json<{ agent_id: string; thread_id: string }>(
      await server.request('POST', '/v2/threads', { body: { agent: spec } }),
      201,
    );
    const b = await json<{ agent_id: string; thread_id: string }>(
      await server.request('POST', '/v2/threads', {
        body: { agent: { ...spec, harness: 'coding_alpha', machine_kind: 'sandbox_a', skills: [] } },
      }),
      201,
    );
    const c = await json<{ agent_id: string }>(
      await server.request('POST', '/v2/threads', { body: { agent: { ...spec, secrets: { KEY: 'v2' } } } }),
      201,
    );
    expect(b.agent_id).toBe(a.agent_id);
    expect(b.thread_id).not.toBe(a.thread_id);
    expect(c.agent_id).not.toBe(a.agent_id);
    const byId = await json<{ agent_id: string }>(
      await server.request('POST', '/v2/threads', { body: { agent_id: a.agent_id, input: 'hello there' } }),
      201,
    );
    expect(byId.agent_id).toBe(a.agent_id);
  });

  it('settles to the reported outcome, and to fail on a model error', async () => {
    const ok = await json<{ thread_id: string }>(
      await server.request('POST', '/v2/threads', {
        body: { agent: agentSpec(), input: '::outcome success all done' },
      }),
      201,
    );
    const bad = await json<{ thread_id: string }>(
      await server.request('POST', '/v2/threads', {
        body: { agent: agentSpec(), input: '::error upstream exploded' },
      }),
      201,
    );
    expect((await settled(server, ok.thread_id)).status).toBe('success');
    expect((await allEvents(server, ok.thread_id)).at(-1)!.data).toEqual({
      status: 'success',
      summary: 'all done',
    });
    expect((await settled(server, bad.thread_id)).status).toBe('fail');
    const events = await allEvents(server, bad.thread_id);
    expect(events.find((e) => e.type === 'error')!.data).toMatchObject({ code: 'model_error' });
    expect(events.find((e) => e.type === 'turn.ended')!.data).toEqual({ stop_reason: 'error' });
  });

  it('interrupts a long turn: the turn ends cancelled and the thread settles idle', async () => {
    const { thread_id } = await json<{ thread_id: string }>(
      await server.request('POST', '/v2/threads', { body: { agent: agentSpec(), input: '::sleep 60000' } }),
      201,
    );
    await turnStarted(server, thread_id);
    const stopped = Date.now();
    // The body is optional: none at all is a Stop of the current generation.
    const record = await json<{ id: string; generation: number; cancelled_inputs: unknown[] }>(
      await server.request('POST', `/v2/threads/${thread_id}/interrupt`),
      200,
    );
    expect(record).toMatchObject({ id: thread_id, generation: 1, cancelled_inputs: [] });
    expect((await settled(server, thread_id)).status).toBe('idle');
    expect(Date.now() - stopped).toBeLessThan(5000);
    const events = await allEvents(server, thread_id);
    expect(events.find((e) => e.type === 'turn.ended')!.data).toEqual({ stop_reason: 'cancelled' });
    expect(events.filter((e) => e.type === 'idle')).toHaveLength(1);
    // The task path answers the same record for a retry of the same Stop.
    const retry = await json<{ generation: number }>(
      await server.request('POST', `/v2/tasks/${thread_id}/interrupt`, { body: { expected_generation: 0 } }),
      200,
    );
    expect(retry.generation).toBe(1);
    // No body, or an empty one sent as JSON, on either path: a Stop of the current generation.
    let generation = 1;
    for (const path of [`/v2/threads/${thread_id}/interrupt`, `/v2/tasks/${thread_id}/interrupt`]) {
      for (const headers of [{}, { 'content-type': 'application/json' }] as Record<string, string>[]) {
        const answer = await json<{ generation: number }>(
          await server.request('POST', path, { headers }),
          200,
        );
        expect(answer.generation, `${path} ${JSON.stringify(headers)}`).toBe(++generation);
      }
    }
  });

  it('lists events by page and as task event records, newest first with desc', async () => {
    const { thread_id } = await json<{ thread_id: string }>(
      await server.request('POST', '/v2/threads', { body: { agent: agentSpec(), input: 'one two three' } }),
      201,
    );
    await settled(server, thread_id);
    const all = await allEvents(server, thread_id);
    const first = await json<{ items: { seq: number }[]; next_cursor: string | null }>(
      await server.request('GET', `/v2/threads/${thread_id}/events?limit=2`),
      200,
    );
    expect(first.items.map((e) => e.seq)).toEqual([1, 2]);
    expect(first.next_cursor).toBe('2');
    const rest = await json<{ items: { seq: number }[]; next_cursor: string | null }>(
      await server.request('GET', `/v2/threads/${thread_id}/events?after=2&limit=1000`),
      200,
    );
    expect(rest.items.map((e) => e.seq)).toEqual(all.slice(2).map((e) => e.seq));
    expect(rest.next_cursor).toBeNull();
    const desc = await json<{
      items: { type: string; task_id: string; thread_id: string; agent_id: string }[];
    }>(await server.request('GET', `/v2/tasks/${thread_id}/events?limit=3&desc=true`), 200);
    expect(desc.items.map((e) => e.type)).toEqual(['idle', 'turn.ended', all.at(-3)!.type]);
    expect(desc.items[0]).toMatchObject({ task_id: thread_id, thread_id });
    // Both paths answer the same records: the spec's event record, with the thread's seq.
    const records = await json<{ items: Record<string, unknown>[] }>(
      await server.request('GET', `/v2/tasks/${thread_id}/events?limit=1000`),
      200,
    );
    expect(all).toEqual(records.items);
    expect(Object.keys(all[0]!).sort()).toEqual(
      [
        'id',
        'event_id',
        'seq',
        'received_at',
        'ts',
        'started_at',
        'ended_at',
        'type',
        'tool_id',
        'subagent_id',
        'session_id',
        'turn_id',
        'agent_id',
        'task_id',
        'thread_id',
        'team_id',
        'group_id',
        'orchestration_id',
        'data',
      ].sort(),
    );
  });
});
