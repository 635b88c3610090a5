import { mintToken } from '@paddock/core';
import { testDatabases } from '@paddock/testing';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminTokenWith, agentSpec, allEvents, json, settled } from './helpers.ts';

interface AgentRecord {
  id: string;
  title: string;
  harness: string;
  machine_kind: string;
  instructions: string | null;
  model: string | null;
  entrypoint: string | null;
  secret_names: string[];
}

describe.each(testDatabases())('GET and PATCH /v2/agents on $name', (database) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(database);
  });
  afterAll(() => server.close());

  async function newAgent(spec: Record<string, unknown> = {}) {
    const created = await json<{ thread_id: string; agent_id: string }>(
      await server.request('POST', '/v2/threads', { body: { agent: agentSpec(spec) } }),
      201,
    );
    return created;
  }
  const patch = (agentId: string, body: unknown, token?: string) =>
    server.request('PATCH', `/v2/agents/${agentId}`, { body, token });

  async function tokenFor(userToken: (userId: string) => Parameters<typeof mintToken>[1]) {
    const { store } = server.paddock.services;
    const admin = await store.db.selectFrom('users').select('id').executeTakeFirstOrThrow();
    return (await store.transaction((trx) => mintToken(trx, userToken(admin.id)))).token;
  }

  it('replaces the given fields, shows secret names but never values, and new threads run the new spec', async () => {
    const { agent_id } = await newAgent({ instructions: 'old', secrets: { OLD_SECRET: 'old-value' } });
    const record = await json<AgentRecord>(
      await patch(agent_id, {
        instructions: 'new instructions',
        title: 'Renamed',
        entrypoint: 'echo booted > /workspace/boot.txt',
        secrets: { NEW_SECRET: 'new-value' },
      }),
      200,
    );
    expect(record).toMatchObject({
      id: agent_id,
      title: 'Renamed',
      instructions: 'new instructions',
      entrypoint: 'echo booted > /workspace/boot.txt',
      secret_names: ['NEW_SECRET'],
    });
    expect(JSON.stringify(record)).not.toContain('new-value');

    const thread = await json<{ thread_id: string; agent_id: string }>(
      await server.request('POST', '/v2/threads', {
        body: { agent_id, input: '::sh echo "[$NEW_SECRET][$OLD_SECRET]"; cat /workspace/boot.txt' },
      }),
      201,
    );
    expect(thread.agent_id).toBe(agent_id);
    await settled(server, thread.thread_id);
    const tool = (await allEvents(server, thread.thread_id)).find((e) => e.type === 'tool_call.end');
    expect(tool?.data).toMatchObject({ output: '[new-value][]\nbooted\n' });

    const cleared = await json<AgentRecord>(await patch(agent_id, { entrypoint: null, model: null }), 200);
    expect(cleared).toMatchObject({ entrypoint: null, model: null, instructions: 'new instructions' });
  });

  it('sets and removes one secret, keeping the others, answering names only; needs publish', async () => {
    const { agent_id } = await newAgent({ secrets: { KEEP: 'kept-value', SWAP: 'first-value' } });
    const secret = (name: string, method: 'PUT' | 'DELETE', value?: string, token?: string) =>
      server.request(method, `/v2/agents/${agent_id}/secrets/${name}`, {
        body: value === undefined ? undefined : { value },
        token,
      });
    const set = await json<AgentRecord>(await secret('SWAP', 'PUT', 'second-value'), 200);
    expect(set.secret_names.sort()).toEqual(['KEEP', 'SWAP']);
    expect(JSON.stringify(set)).not.toMatch(/kept-value|second-value/);
    const added = await json<AgentRecord>(await secret('NEW_ONE', 'PUT', 'third-value'), 200);
    expect(added.secret_names.sort()).toEqual(['KEEP', 'NEW_ONE', 'SWAP']);
    const removed = await json<AgentRecord>(await secret('NEW_ONE', 'DELETE'), 200);
    expect(removed.secret_names.sort()).toEqual(['KEEP', 'SWAP']);
    // The sandbox sees the kept value and the new one.
    const thread = await json<{ thread_id: string }>(
      await server.request('POST', '/v2/threads', {
        body: { agent_id, input: '::sh echo "[$KEEP][$SWAP]"' },
      }),
      201,
    );
    await settled(server, thread.thread_id);
    const tool = (await allEvents(server, thread.thread_id)).find((e) => e.type === 'tool_call.end');
    expect(tool?.data).toMatchObject({ output: '[kept-value][second-value]\n' });

    expect((await secret('not-a-name!', 'PUT', 'x')).status).toBe(422);
    const reader = await adminTokenWith(server, ['read']);
    expect((await secret('SWAP', 'PUT', 'x', reader)).status).toBe(403);
    expect((await secret('SWAP', 'DELETE', undefined, reader)).status).toBe(403);
  });

  it('GET answers the record PATCH answers, to any scope; a bound credential reaches only its own agent', async () => {
    const own = await newAgent({ instructions: 'mine', secrets: { MINE: 'secret-value' } });
    const other = await newAgent({ instructions: 'not mine' });
    const get = (agentId: string, token?: string) =>
      server.request('GET', `/v2/agents/${agentId}`, { token });
    const record = await json<AgentRecord>(await patch(own.agent_id, {}), 200);
    expect(record).toMatchObject({ id: own.agent_id, instructions: 'mine', secret_names: ['MINE'] });
    expect(await json(await get(own.agent_id), 200)).toEqual(record);
    const readOnly = await tokenFor((userId) => ({ kind: 'pat', userId, name: 'ro', scopes: ['read'] }));
    expect(await json(await get(own.agent_id, readOnly), 200)).toEqual(record);
    const sandboxToken = await tokenFor((userId) => ({
      kind: 'thread',
      userId,
      name: 'sandbox',
      scopes: ['read', 'publish'],
      threadId: own.thread_id,
    }));
    const { key } = await json<{ key: string }>(
      await server.request('POST', `/v2/cli/agents/${own.agent_id}/keys`, { body: {} }),
      201,
    );
    for (const bound of [sandboxToken, key]) {
      expect(await json(await get(own.agent_id, bound), 200)).toEqual(record);
      expect(await json(await get(other.agent_id, bound), 404)).toEqual({ detail: 'Agent not found' });
    }
    expect(await json(await get('0190c3c8-7a86-7000-8000-000000000000'), 404)).toEqual({
      detail: 'Agent not found',
    });
    const doc = await json<{ paths: Record<string, Record<string, unknown>> }>(
      await server.request('GET', '/v2/openapi.json', { token: null }),
      200,
    );
    expect(Object.keys(doc.paths['/v2/agents/{agent_id}']!).sort()).toEqual(['get', 'patch']);
  });

  it('keeps harness and machine_kind fixed: a different value is 409 naming both, the same one is fine', async () => {
    const { agent_id } = await newAgent();
    const harness = await json<{ detail: { code: string; message: string } }>(
      await patch(agent_id, { harness: 'coding_beta' }),
      409,
    );
    expect(harness.detail.message).toBe(
      'harness is immutable after agent creation (current coding_alpha, requested coding_beta)',
    );
    const kind = await json<{ detail: { message: string } }>(
      await patch(agent_id, { machine_kind: 'sandbox_c' }),
      409,
    );
    expect(kind.detail.message).toContain('current sandbox_a, requested sandbox_c');
    await json(
      await patch(agent_id, { harness: 'coding_alpha', machine_kind: 'sandbox_a', model: 'scripted' }),
      200,
    );
  });

  it('refuses unknown fields (422), unknown agents (404), read-only and sandbox tokens (403), and changes nothing then', async () => {
    const { agent_id } = await newAgent({ instructions: 'kept' });
    await json(await patch(agent_id, { colour: 'red' }), 422);
    await json(await patch('0190c3c8-7a86-7000-8000-000000000000', { title: 'x' }), 404);
    const readOnly = await tokenFor((userId) => ({ kind: 'pat', userId, name: 'ro', scopes: ['read'] }));
    // Secrets always need `publish` (spec Authentication 11), whatever the guard's setting.
    expect(
      (await json<{ detail: string }>(await patch(agent_id, { secrets: { K: 'v' } }, readOnly), 403)).detail,
    ).toBe('PAT lacks required scope: publish');
    const { thread_id } = await newAgent({ instructions: 'kept' });
    const sandboxToken = await tokenFor((userId) => ({
      kind: 'thread',
      userId,
      name: 'sandbox',
      scopes: ['read', 'publish'],
      threadId: thread_id,
    }));
    await json(await patch(agent_id, { instructions: 'hijacked' }, sandboxToken), 403);
    const unchanged = await json<AgentRecord>(await patch(agent_id, {}), 200);
    expect(unchanged).toMatchObject({ instructions: 'kept', secret_names: [] });
  });
});

describe.each(testDatabases())('PATCH /v2/agents write guard on $name', (database) => {
  let server: TestServer;
  let logOnly: TestServer;
  const logged: { msg?: string; credential?: string }[] = [];
  beforeAll(async () => {
    server = await startTestServer(database);
    const logger = pino({ level: 'warn' }, { write: (line: string) => void logged.push(JSON.parse(line)) });
    logOnly = await startTestServer(database, { PADDOCK_ENFORCE_WRITE_SCOPES: 'false' }, { logger });
  });
  afterAll(() => Promise.all([server.close(), logOnly.close()]));

  async function readOnlyToken(on: TestServer) {
    const { store } = on.paddock.services;
    const admin = await store.db.selectFrom('users').select('id').executeTakeFirstOrThrow();
    return mintToken(store.db, { kind: 'pat', userId: admin.id, name: 'ro', scopes: ['read'] });
  }

  it('by default refuses a read-only token on every field, the entrypoint included, and changes nothing', async () => {
    const { agent_id } = await json<{ agent_id: string }>(
      await server.request('POST', '/v2/threads', { body: { agent: agentSpec({ instructions: 'kept' }) } }),
      201,
    );
    const readOnly = (await readOnlyToken(server)).token;
    for (const body of [{ title: 'x' }, { entrypoint: 'touch /workspace/pwned' }]) {
      const refused = await server.request('PATCH', `/v2/agents/${agent_id}`, { body, token: readOnly });
      expect((await json<{ detail: string }>(refused, 403)).detail).toBe('PAT lacks required scope: publish');
    }
    const record = await json<AgentRecord>(
      await server.request('PATCH', `/v2/agents/${agent_id}`, { body: {} }),
      200,
    );
    expect(record).toMatchObject({ instructions: 'kept', entrypoint: null });
    expect(record.title).not.toBe('x');
  });

  it('with PADDOCK_ENFORCE_WRITE_SCOPES=false lets a read-only token through the guarded fields and logs it', async () => {
    const { agent_id } = await json<{ agent_id: string }>(
      await logOnly.request('POST', '/v2/threads', {
        body: { agent: agentSpec({ instructions: 'guarded' }) },
      }),
      201,
    );
    const readOnly = await readOnlyToken(logOnly);
    const record = await json<AgentRecord>(
      await logOnly.request('PATCH', `/v2/agents/${agent_id}`, {
        body: { title: 'Renamed by a reader' },
        token: readOnly.token,
      }),
      200,
    );
    expect(record.title).toBe('Renamed by a reader');
    expect(logged).toContainEqual(
      expect.objectContaining({
        msg: 'guarded write would be denied (PADDOCK_ENFORCE_WRITE_SCOPES is off)',
        credential: readOnly.id,
      }),
    );
  });
});
