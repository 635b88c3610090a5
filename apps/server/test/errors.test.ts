import { mintToken } from '@paddock/core';
import { testDatabases } from '@paddock/testing';
import { listThreadsForTest, startTestServer, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminTokenWith, agentSpec, json } from './helpers.ts';

describe.each(testDatabases())('bad input and credentials on $name', (database) => {
  let server: TestServer;
  let readToken: string;
  let adminOnlyToken: string;
  const missing = '0190a0a0-0000-7000-8000-000000000000';

  beforeAll(async () => {
    server = await startTestServer(database);
    readToken = await adminTokenWith(server, ['read']);
    adminOnlyToken = await adminTokenWith(server, ['admin']);
  });
  afterAll(() => server.close());

  async function threadCount(): Promise<number> {
    return (await listThreadsForTest(server)).length;
  }

  it('refuses a request without a token, and one with a bad token', async () => {
    const refused = await server.request('GET', `/v2/threads/${missing}`, { token: null });
    expect(refused.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const none = await json(refused, 401);
    expect(none).toEqual({ detail: 'missing bearer token' });
    const bad = await json(
      await server.request('GET', `/v2/threads/${missing}`, { token: 'pdk_pat_nope' }),
      401,
    );
    expect(bad).toEqual({ detail: 'invalid or expired PAT' });
  });

  it('refuses writes from read-only and admin-only tokens and changes nothing', async () => {
    const before = await threadCount();
    for (const token of [readToken, adminOnlyToken]) {
      const body = await json(
        await server.request('POST', '/v2/threads', { token, body: { agent: agentSpec(), input: 'hi' } }),
        403,
      );
      expect(body).toEqual({ detail: 'PAT lacks required scope: publish' });
    }
    expect(await threadCount()).toBe(before);
    const { thread_id } = await json<{ thread_id: string }>(
      await server.request('POST', '/v2/threads', { body: { agent: agentSpec() } }),
      201,
    );
    await json(
      await server.request('POST', `/v2/threads/${thread_id}/messages`, {
        token: readToken,
        body: { messages: [{ content: 'x' }] },
      }),
      403,
    );
    await json(
      await server.request('POST', `/v2/threads/${thread_id}/interrupt`, { token: readToken, body: {} }),
      403,
    );
    const transcript = await json<{ items: unknown[] }>(
      await server.request('GET', `/v2/threads/${thread_id}/messages`, { token: readToken }),
      200,
    );
    expect(transcript.items).toEqual([]);
  });

  it('answers 422 with an array of {loc, msg, type} for unknown and malformed fields', async () => {
    const before = await threadCount();
    const unknown = await json<{ detail: { loc: unknown[]; msg: string; type: string }[] }>(
      await server.request('POST', '/v2/threads', {
        body: { agent: agentSpec({ colour: 'red' }), input: 'x' },
      }),
      422,
    );
    expect(unknown.detail).toContainEqual(expect.objectContaining({ loc: ['body', 'agent', 'colour'] }));
    const cases: unknown[] = [
      { agent: agentSpec({ harness: 'coding_omega' }) },
      { agent: agentSpec({ machine_kind: 'sandbox_z' }) },
      { agent: agentSpec({ secrets: { 'BAD-NAME': 'x' } }) },
      { agent: agentSpec({ instructions: 42 }) },
      { agent: agentSpec(), input: 'x', messages: [{ content: 'y' }] },
      { input: 'no agent' },
      { agent: agentSpec(), messages: [] },
      { agent: agentSpec(), extra: true },
    ];
    for (const body of cases) {
      const answer = await json<{ detail: { loc: unknown[]; msg: string; type: string }[] }>(
        await server.request('POST', '/v2/threads', { body }),
        422,
      );
      expect(Array.isArray(answer.detail), JSON.stringify(body)).toBe(true);
      expect(answer.detail[0]).toEqual({
        loc: expect.any(Array),
        msg: expect.any(String),
        type: expect.any(String),
      });
    }
    await json(await server.request('POST', '/v2/threads', { body: 'not json', headers: {} }), 422);
    expect(await threadCount()).toBe(before);
  });

  it('answers the provider rules of D4 at agent create', async () => {
    const disabled = await json<{ detail: { code: string } }>(
      await server.request('POST', '/v2/threads', {
        body: { agent: agentSpec({ machine_kind: 'sandbox_b' }) },
      }),
      503,
    );
    expect(disabled.detail.code).toBe('provider_disabled');
    const runtime = await json<{ detail: { code: string } }>(
      await server.request('POST', '/v2/threads', {
        body: { agent: agentSpec({ machine_kind: 'sandbox_c', harness: 'knowledge_cloud' }) },
      }),
      422,
    );
    expect(runtime.detail.code).toBe('runtime_not_supported');
  });

  it('answers 404 for a missing agent, thread and task, and for an unrouted path', async () => {
    expect(
      await json(
        await server.request('POST', '/v2/threads', { body: { agent_id: missing, input: 'x' } }),
        404,
      ),
    ).toEqual({ detail: 'Agent not found' });
    expect(await json(await server.request('GET', `/v2/threads/${missing}`), 404)).toEqual({
      detail: 'Thread not found',
    });
    expect(await json(await server.request('GET', `/v2/threads/${missing}/messages`), 404)).toEqual({
      detail: 'Thread not found',
    });
    expect(await json(await server.request('GET', `/v2/tasks/${missing}/events`), 404)).toEqual({
      detail: 'Task not found',
    });
    expect(await json(await server.request('GET', '/v2/nothing/here'), 404)).toEqual({ detail: 'Not Found' });
    expect(await json(await server.request('GET', '/v2/threads/not-a-uuid'), 422)).toMatchObject({
      detail: [{ loc: ['params', 'thread_id'] }],
    });
  });

  it('refuses an empty message list and an oversized body', async () => {
    const { thread_id } = await json<{ thread_id: string }>(
      await server.request('POST', '/v2/threads', { body: { agent: agentSpec() } }),
      201,
    );
    await json(
      await server.request('POST', `/v2/threads/${thread_id}/messages`, { body: { messages: [] } }),
      422,
    );
    await json(
      await server.request('POST', `/v2/threads/${thread_id}/messages`, {
        body: { messages: [{ content: '' }] },
      }),
      422,
    );
    const huge = 'x'.repeat(5 * 1024 * 1024);
    const tooBig = await server.request('POST', `/v2/threads/${thread_id}/messages`, {
      body: { messages: [{ content: huge }] },
    });
    expect(tooBig.status).toBe(413);
    expect(await tooBig.json()).toEqual({ detail: expect.any(String) });
    const transcript = await json<{ items: unknown[] }>(
      await server.request('GET', `/v2/threads/${thread_id}/messages`),
      200,
    );
    expect(transcript.items).toEqual([]);
  });

  it('keeps a thread-bound token to its own thread', async () => {
    const a = await json<{ thread_id: string }>(
      await server.request('POST', '/v2/threads', { body: { agent: agentSpec() } }),
      201,
    );
    const b = await json<{ thread_id: string }>(
      await server.request('POST', '/v2/threads', { body: { agent: agentSpec() } }),
      201,
    );
    const { store } = server.paddock.services;
    const thread = await store.db
      .selectFrom('threads')
      .select(['owner_user_id', 'agent_id'])
      .where('id', '=', a.thread_id)
      .executeTakeFirstOrThrow();
    const bound = await mintToken(store.db, {
      kind: 'thread',
      userId: thread.owner_user_id,
      name: 't',
      scopes: ['read', 'publish'],
      threadId: a.thread_id,
    });
    await json(await server.request('GET', `/v2/threads/${a.thread_id}`, { token: bound.token }), 200);
    expect(
      await json(await server.request('GET', `/v2/threads/${b.thread_id}`, { token: bound.token }), 404),
    ).toEqual({
      detail: 'Thread not found',
    });
    const roles = await json<{ detail: string }>(
      await server.request('POST', `/v2/threads/${a.thread_id}/messages`, {
        token: bound.token,
        body: { messages: [{ role: 'assistant', content: 'pretend' }] },
      }),
      403,
    );
    expect(roles.detail).toContain('messages:write_roles');
    const before = await threadCount();
    const fanOut = await json<{ detail: { code: string } }>(
      await server.request('POST', '/v2/threads', {
        token: bound.token,
        body: { agent_id: thread.agent_id, input: 'x' },
      }),
      403,
    );
    expect(fanOut.detail.code).toBe('forbidden');
    expect(await threadCount()).toBe(before);
  });

  it('answers 503 with Retry-After when credentials cannot be looked up', async () => {
    const broken = await startTestServer(database);
    const fresh = await adminTokenWith(broken, ['read']);
    // The fault: the database goes away under a running server.
    await broken.paddock.services.store.db.destroy();
    const answer = await broken.request('GET', `/v2/threads/${missing}`, { token: fresh });
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('2');
    expect(await answer.json()).toEqual({ detail: 'authorization temporarily unavailable' });
    await broken.close().catch(() => {});
  });

  it('answers a Stop whose database fails with 503 turn_interrupt_unconfirmed and Retry-After 1', async () => {
    const broken = await startTestServer(database);
    const { thread_id } = await json<{ thread_id: string }>(
      await broken.request('POST', '/v2/threads', { body: { agent: agentSpec() } }),
      201,
    );
    // The credential still resolves (every request reads it); the fault is the database failing as
    // the Stop writes.
    const { store } = broken.paddock.services;
    (store as { transaction: typeof store.transaction }).transaction = () =>
      Promise.reject(new Error('Connection terminated unexpectedly'));
    const answer = await broken.request('POST', `/v2/tasks/${thread_id}/interrupt`, {
      body: { expected_generation: 0 },
    });
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('1');
    expect(await answer.json()).toEqual({
      detail: { code: 'turn_interrupt_unconfirmed', message: expect.any(String) },
    });
    await broken.close().catch(() => {});
  });

  it('serves the OpenAPI document generated from the protocol schemas', async () => {
    const doc = await json<{ openapi: string; paths: Record<string, unknown> }>(
      await server.request('GET', '/v2/openapi.json', { token: null }),
      200,
    );
    expect(doc.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/v2/threads', '/v2/threads/{thread_id}', '/v2/threads/{thread_id}/messages']),
    );
  });
});
