import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, sumOrgModelTokens } from '@paddock/store';
import { createPostgresDatabase, testDatabases } from '@paddock/testing';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminTokenWith, agentSpec, allEvents, json, sandboxToken, settled } from './helpers.ts';

// The gateway counts every model call (D16): to the thread whose token made it, as a `usage` event
// of its running turn, and to the organization's credits, whoever the caller.
describe.each(testDatabases())('model usage on $name', (database) => {
  let server: TestServer;
  let orgId: string;
  beforeAll(async () => {
    server = await startTestServer(database);
    const row = await server.paddock.services.store.db
      .selectFrom('orgs')
      .select('id')
      .executeTakeFirstOrThrow();
    orgId = row.id;
  });
  afterAll(() => server.close());

  const credits = () => sumOrgModelTokens(server.paddock.services.store.db, orgId);

  it("counts a turn's model calls to its thread, inside the turn, and to the organization", async () => {
    const before = await credits();
    const created = await json<{ thread_id: string }>(
      await server.request('POST', '/v2/threads', { body: { agent: agentSpec(), input: '::sh echo hi' } }),
      201,
    );
    await settled(server, created.thread_id);
    const events = await allEvents(server, created.thread_id);
    const turnId = events.find((e) => e.type === 'turn.started')!.turn_id;
    const usage = events.filter((e) => e.type === 'usage');
    // One call for the tool call, one for the answer that quotes its result.
    expect(usage).toHaveLength(2);
    for (const event of usage) {
      expect(event.turn_id).toBe(turnId);
      expect(event.data).toMatchObject({ model: 'scripted' });
      expect(event.data.input_tokens).toBeGreaterThan(0);
      expect(event.data.output_tokens).toBeGreaterThan(0);
    }
    // Counted before the call ended, so before the turn's end.
    expect(events.at(-1)!.type).toBe('idle');
    const counted = usage.reduce(
      (sum, e) => sum + Number(e.data.input_tokens) + Number(e.data.output_tokens),
      0,
    );
    expect((await credits()) - before).toBe(counted);
  });

  it('takes a credential that may run turns, from whichever header the dialect sends', async () => {
    const body = { model: 'scripted', messages: [{ role: 'user', content: 'hi' }] };
    const readOnly = await adminTokenWith(server, ['read']);
    const refused = await server.request('POST', '/v2/gateway/openai/v1/chat/completions', {
      body,
      token: readOnly,
    });
    expect(refused.status).toBe(403);
    for (const header of ['x-api-key', 'x-goog-api-key']) {
      const response = await fetch(`${server.url}/v2/gateway/openai/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [header]: server.token },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(200);
    }
  });

  it("gives a thread's token asking for the `thread` model its agent's model, with the agent's instructions", async () => {
    const marker = `thread-model-${randomUUID().slice(0, 8)}`;
    const created = await json<{ thread_id: string }>(
      await server.request('POST', '/v2/threads', {
        body: { agent: agentSpec({ instructions: `Be brief. ${marker}` }), input: 'hello' },
      }),
      201,
    );
    await settled(server, created.thread_id);
    const token = await sandboxToken(server, created.thread_id);
    const ask = (credential: string) =>
      server.request('POST', '/v2/gateway/openai/v1/chat/completions', {
        body: { model: 'thread', messages: [{ role: 'user', content: `::seen ${marker}` }] },
        token: credential,
      });
    const answer = await json<{ choices: { message: { content: string } }[] }>(await ask(token), 200);
    expect(answer.choices[0]?.message.content).toContain('seen: yes');
    // Counted to the thread as its agent's model.
    const usage = (await allEvents(server, created.thread_id)).filter((e) => e.type === 'usage');
    expect(usage.at(-1)?.data.model).toBe('scripted');
    // Without a thread the id means nothing.
    expect((await ask(server.token)).status).toBe(404);
  });

  it("counts a personal token's calls to the organization, streamed or not", async () => {
    const before = await credits();
    const call = async (stream: boolean) => {
      const response = await server.request('POST', '/v2/gateway/openai/v1/chat/completions', {
        body: {
          model: 'scripted',
          messages: [{ role: 'user', content: 'count these words please' }],
          stream,
          stream_options: stream ? { include_usage: true } : undefined,
        },
      });
      expect(response.status).toBe(200);
      return response.text();
    };
    const plain = JSON.parse(await call(false)) as {
      usage: { prompt_tokens: number; completion_tokens: number };
    };
    const afterPlain = await credits();
    expect(afterPlain - before).toBe(plain.usage.prompt_tokens + plain.usage.completion_tokens);
    await call(true);
    expect(await credits()).toBe(afterPlain + (afterPlain - before));
  });
  it('counts the calls of every dialect, as each dialect reports them', async () => {
    const post = async (path: string, body: unknown, headers: Record<string, string>) => {
      const response = await fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(200);
      return (await response.json()) as Record<string, never>;
    };
    const calls: [string, () => Promise<number>][] = [
      [
        'openai responses',
        async () => {
          const answer = await post(
            '/v2/gateway/openai/v1/responses',
            { model: 'scripted', input: 'hello responses', store: false },
            { authorization: `Bearer ${server.token}` },
          );
          return (answer.usage as { total_tokens: number }).total_tokens;
        },
      ],
      [
        'anthropic',
        async () => {
          const answer = await post(
            '/v2/gateway/anthropic/v1/messages',
            { model: 'scripted', max_tokens: 100, messages: [{ role: 'user', content: 'hello anthropic' }] },
            { 'x-api-key': server.token },
          );
          const usage = answer.usage as { input_tokens: number; output_tokens: number };
          return usage.input_tokens + usage.output_tokens;
        },
      ],
      [
        'gemini',
        async () => {
          const answer = await post(
            '/v2/gateway/gemini/v1beta/models/scripted:generateContent',
            { contents: [{ role: 'user', parts: [{ text: 'hello gemini' }] }] },
            { 'x-goog-api-key': server.token },
          );
          return (answer.usageMetadata as { totalTokenCount: number }).totalTokenCount;
        },
      ],
    ];
    for (const [dialect, call] of calls) {
      const before = await credits();
      const reported = await call();
      expect(reported, dialect).toBeGreaterThan(0);
      expect((await credits()) - before, dialect).toBe(reported);
    }
  });
});

describe.each(testDatabases())('migration 0018 on $name', (database) => {
  it("copies the usage threads' events recorded before the ledger into it", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'paddock-migrate-'));
    const postgres =
      database.name === 'postgres' ? await createPostgresDatabase(database.adminUrl) : undefined;
    const open = () => openStore({ databaseUrl: postgres?.url, dataDir });
    try {
      const store = await open();
      const { db } = store;
      // Back to the schema before 0018, with a thread whose events recorded usage.
      await db.schema.dropTable('model_usage').execute();
      await sql`delete from kysely_migration where name = '0018-model-usage'`.execute(db);
      const at = new Date().toISOString();
      const id = randomUUID();
      await sql`insert into users (id, username, created_at) values (${id}, 'u', ${at})`.execute(db);
      await sql`insert into orgs (id, name, created_at) values (${id}, 'o', ${at})`.execute(db);
      await sql`insert into teams (id, org_id, name, created_at) values (${id}, ${id}, 't', ${at})`.execute(
        db,
      );
      await sql`insert into agents (id, team_id, owner_user_id, spec_hash, title, harness, machine_kind,
          machine_size, mcp_servers, skills, created_at, updated_at)
        values (${id}, ${id}, ${id}, 'h', 't', 'coding_alpha', 'sandbox_a', 'S', '[]', '[]', ${at}, ${at})`.execute(
        db,
      );
      await sql`insert into threads (id, agent_id, team_id, owner_user_id, title, status, metadata, created_at, updated_at)
        values (${id}, ${id}, ${id}, ${id}, 't', 'idle', '{}', ${at}, ${at})`.execute(db);
      const usage = [
        { input_tokens: 120, output_tokens: 7, model: 'scripted' },
        { input_tokens: 30, output_tokens: 3, model: 'scripted' },
      ];
      for (const [index, data] of usage.entries()) {
        await sql`insert into events (id, thread_id, seq, type, data, ts)
          values (${randomUUID()}, ${id}, ${index + 1}, 'usage', ${JSON.stringify(data)}, ${at})`.execute(db);
      }
      await store.close();

      const migrated = await open();
      try {
        expect(await sumOrgModelTokens(migrated.db, id)).toBe(160);
      } finally {
        await migrated.close();
      }
    } finally {
      await postgres?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
