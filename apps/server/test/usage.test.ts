import { testDatabases } from '@paddock/testing';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { strangerToken } from './control-plane-helpers.ts';
import { agentSpec, json, settled } from './helpers.ts';

interface Report {
  org_id: string;
  from: string;
  days: { date: string; input_tokens: number; output_tokens: number }[];
  agents: { agent_id: string; input_tokens: number; output_tokens: number }[];
  threads: {
    thread_id: string;
    agent_id: string;
    title: string;
    input_tokens: number;
    output_tokens: number;
  }[];
}

describe.each(testDatabases())("an organization's model usage on $name", (database) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(database);
  });
  afterAll(() => server?.close());

  it('sums the tokens of its threads by day, by agent and by thread, for members only', async () => {
    const run = async (input: string) => {
      const { thread_id, agent_id } = await json<{ thread_id: string; agent_id: string }>(
        await server.request('POST', '/v2/threads', { body: { agent: agentSpec(), input } }),
        201,
      );
      await settled(server, thread_id);
      return { thread_id, agent_id };
    };
    const small = await run('hi');
    const large = await run(`please repeat ${'many words '.repeat(50)}`);
    const { items: orgs } = await json<{ items: { id: string }[] }>(
      await server.request('GET', '/v2/cli/orgs'),
      200,
    );
    const orgId = orgs[0]!.id;
    const stored = await server.paddock.services.store.db
      .selectFrom('model_usage')
      .select(['input_tokens', 'output_tokens', 'thread_id'])
      .execute();
    const sum = (rows: typeof stored, key: 'input_tokens' | 'output_tokens') =>
      rows.reduce((n, r) => n + r[key], 0);
    expect(stored.length).toBeGreaterThan(0);

    const report = await json<Report>(await server.request('GET', `/v2/cli/orgs/${orgId}/usage?days=7`), 200);
    const today = new Date().toISOString().slice(0, 10);
    expect(report.days).toEqual([
      { date: today, input_tokens: sum(stored, 'input_tokens'), output_tokens: sum(stored, 'output_tokens') },
    ]);
    expect(report.from.slice(0, 10) < today).toBe(true);
    const ofThread = (id: string) => stored.filter((r) => r.thread_id === id);
    expect(report.threads.map((t) => t.thread_id)).toEqual([large.thread_id, small.thread_id]);
    expect(report.threads[0]).toMatchObject({
      agent_id: large.agent_id,
      input_tokens: sum(ofThread(large.thread_id), 'input_tokens'),
    });
    expect(report.agents).toEqual([
      {
        agent_id: small.agent_id,
        input_tokens: sum(stored, 'input_tokens'),
        output_tokens: sum(stored, 'output_tokens'),
      },
    ]);

    expect((await server.request('GET', `/v2/cli/orgs/${orgId}/usage?days=0`)).status).toBe(422);
    const { token } = await strangerToken(server);
    expect((await server.request('GET', `/v2/cli/orgs/${orgId}/usage`, { token })).status).toBe(404);
  });
});
