import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { newId } from '@paddock/protocol';
import { testDatabases } from '@paddock/testing';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { cliOf, createAgent, strangerToken } from './control-plane-helpers.ts';
import { adminTokenWith, json, settled } from './helpers.ts';

interface EvalRun {
  id: string;
  agent_id: string;
  eval_id: string;
  eval_name: string;
  eval_hash: string;
  task_id: string;
  status: 'running' | 'passed' | 'failed';
  passed: boolean | null;
  reason: string | null;
  error: string | null;
  judge_model: string;
  created_at: string;
  finished_at: string | null;
}
interface EvalDefinition {
  id: string;
  name: string;
  files: { path: string; content: string }[];
  hash: string;
  status: string;
  archived_at: string | null;
}

const evalComponent = (name: string, criteria: string) => ({
  type: 'eval',
  name,
  files: [{ path: 'criteria.md', content: criteria }],
});

/** Publishes these evals (and only these, archiving the rest) on the agent. */
async function publishEvals(server: TestServer, agentId: string, evals: ReturnType<typeof evalComponent>[]) {
  const cli = cliOf(server);
  const { revision } = await json<{ revision: string }>(await cli('GET', `/agents/${agentId}/revision`), 200);
  await json(
    await cli('PUT', `/agents/${agentId}/manifest`, {
      body: { components: evals, reconcile_evals: true, base_revision: revision },
    }),
    200,
  );
  const { items } = await json<{ items: EvalDefinition[] }>(
    await cli('GET', `/agents/${agentId}/evals`),
    200,
  );
  return Object.fromEntries(items.map((e) => [e.name, e]));
}

/** Waits until none of the agent's runs is `running`, and answers them (newest first). */
function finishedRuns(server: TestServer, agentId: string, query = '') {
  return vi.waitFor(
    async () => {
      const { items } = await json<{ items: EvalRun[] }>(
        await cliOf(server)('GET', `/agents/${agentId}/eval-runs${query}`),
        200,
      );
      if (items.some((r) => r.status === 'running')) throw new Error('eval runs still running');
      return items;
    },
    { timeout: 20_000, interval: 50 },
  );
}

describe.each(testDatabases())('evals on $name', (database) => {
  let server: TestServer;
  let cli: ReturnType<typeof cliOf>;
  beforeAll(async () => {
    server = await startTestServer(database);
    cli = cliOf(server);
  });
  afterAll(() => server.close());

  /** An agent with one settled task whose transcript is `hello` / `You said: hello`. */
  async function agentWithTask(instructions: string) {
    const { agent_id, thread_id } = await json<{ agent_id: string; thread_id: string }>(
      await server.request('POST', '/v2/threads', { body: { agent: { instructions }, input: 'hello' } }),
      201,
    );
    await settled(server, thread_id);
    return { agentId: agent_id, taskId: thread_id };
  }

  it('lists eval definitions, archived ones only with include_archived', async () => {
    const { agent_id } = await createAgent(server, { instructions: 'eval listing' });
    await publishEvals(server, agent_id, [
      evalComponent('tone', 'polite'),
      evalComponent('facts', 'correct'),
    ]);
    await publishEvals(server, agent_id, [evalComponent('tone', 'polite')]);
    const active = await json<{ items: EvalDefinition[] }>(
      await cli('GET', `/agents/${agent_id}/evals`),
      200,
    );
    expect(active.items).toEqual([
      expect.objectContaining({
        name: 'tone',
        status: 'active',
        archived_at: null,
        files: [{ path: 'criteria.md', content: 'polite' }],
        hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      }),
    ]);
    for (const query of ['?include_archived=false', '?include_archived=0']) {
      expect(
        (await json<{ items: unknown[] }>(await cli('GET', `/agents/${agent_id}/evals${query}`), 200)).items,
      ).toEqual(active.items);
    }
    const all = await json<{ items: EvalDefinition[] }>(
      await cli('GET', `/agents/${agent_id}/evals?include_archived=true`),
      200,
    );
    expect(all.items.map((e) => `${e.name}:${e.status}`)).toEqual(['facts:archived', 'tone:active']);
    expect(all.items[0].archived_at).toEqual(expect.any(String));
    await json(await cli('GET', `/agents/${agent_id}/evals?include_archived=maybe`), 422);
  });

  it('judges a task against each active eval in the background: passed with the verdict, failed with the error', async () => {
    const { agentId, taskId } = await agentWithTask('judged agent');
    const evals = await publishEvals(server, agentId, [
      // The scripted judge (D8): `::expect` looks for the text in the transcript it was given;
      // `::verdict` answers a fixed verdict; `::error` makes the model call fail.
      evalComponent('echoes', '::expect You said: hello'),
      evalComponent('says-goodbye', '::expect goodbye'),
      evalComponent('strict', '::verdict fail too terse'),
      evalComponent('broken', '::error the judge model fell over'),
      evalComponent('mute', 'Judge this, but the scripted model gives no verdict without a directive.'),
    ]);
    const started = await json<{ items: EvalRun[] }>(
      await cli('POST', `/agents/${agentId}/eval-runs`, { body: { task_id: taskId } }),
      201,
    );
    expect(started.items).toHaveLength(5);
    expect(
      started.items.every((r) => r.status === 'running' && r.passed === null && r.finished_at === null),
    ).toBe(true);
    expect(new Set(started.items.map((r) => r.judge_model))).toEqual(new Set(['scripted']));

    const runs = await finishedRuns(server, agentId, `?task_id=${taskId}`);
    const byName = Object.fromEntries(runs.map((r) => [r.eval_name, r]));
    expect(byName.echoes).toMatchObject({
      status: 'passed',
      passed: true,
      error: null,
      reason: 'found "You said: hello" in the conversation',
      eval_id: evals.echoes.id,
      eval_hash: evals.echoes.hash,
      task_id: taskId,
      agent_id: agentId,
      finished_at: expect.any(String),
    });
    expect(byName['says-goodbye']).toMatchObject({ status: 'passed', passed: false, error: null });
    expect(byName.strict).toMatchObject({ status: 'passed', passed: false, reason: 'too terse' });
    expect(byName.broken).toMatchObject({
      status: 'failed',
      passed: null,
      error: 'the judge model fell over',
    });
    expect(byName.mute).toMatchObject({
      status: 'failed',
      passed: null,
      // The AI SDK refuses an answer without the forced tool call; the run says so.
      error: expect.stringContaining("the required tool 'report_verdict'"),
    });

    // Only the evals named, and a judge model the gateway cannot serve: the run fails, saying so.
    const named = await json<{ items: EvalRun[] }>(
      await cli('POST', `/agents/${agentId}/eval-runs`, {
        body: { task_id: taskId, eval_ids: [evals.echoes.id], judge_model: 'anthropic/claude-nonexistent' },
      }),
      201,
    );
    expect(named.items.map((r) => r.eval_name)).toEqual(['echoes']);
    const [unserved] = await finishedRuns(server, agentId, '?limit=1');
    expect(unserved).toMatchObject({
      id: named.items[0].id,
      status: 'failed',
      passed: null,
      judge_model: 'anthropic/claude-nonexistent',
      error: 'the model gateway serves no model "anthropic/claude-nonexistent"',
    });
  });

  it('refuses unknown or archived evals, tasks of other agents, and bad bodies, starting nothing', async () => {
    const { agentId, taskId } = await agentWithTask('refusals');
    const other = await createAgent(server, { instructions: 'another agent' });
    const evals = await publishEvals(server, agentId, [evalComponent('kept', '::verdict pass ok')]);
    const current = await publishEvals(server, agentId, [evalComponent('old', '::verdict pass ok')]);
    const runsBefore = await finishedRuns(server, agentId);
    const post = (body: unknown) => cli('POST', `/agents/${agentId}/eval-runs`, { body });

    for (const eval_ids of [[newId()], [evals.kept.id]]) {
      // `kept` is archived by now (the second publish reconciled it away).
      expect((await json<{ detail: string }>(await post({ task_id: taskId, eval_ids }), 404)).detail).toBe(
        'Eval not found',
      );
    }
    for (const task_id of [other.thread_id, newId()]) {
      expect((await json<{ detail: string }>(await post({ task_id }), 404)).detail).toBe('Task not found');
    }
    for (const body of [
      {},
      { task_id: 'nope' },
      { task_id: taskId, eval_ids: [] },
      { task_id: taskId, x: 1 },
    ]) {
      await json(await post(body), 422);
    }
    expect(await finishedRuns(server, agentId)).toEqual(runsBefore);
    // The active one still runs.
    const ok = await json<{ items: EvalRun[] }>(
      await post({ task_id: taskId, eval_ids: [current.old.id] }),
      201,
    );
    expect(ok.items).toHaveLength(1);
  });

  it('lists runs newest first, filtered by task, 50 by default and at most 200', async () => {
    const { agentId, taskId: first } = await agentWithTask('many runs');
    const { thread_id: second } = await json<{ thread_id: string }>(
      await server.request('POST', '/v2/threads', { body: { agent_id: agentId } }),
      201,
    );
    await publishEvals(server, agentId, [
      evalComponent('a', '::verdict pass a'),
      evalComponent('b', '::verdict pass b'),
      evalComponent('c', '::verdict fail c'),
    ]);
    const started: string[] = [];
    for (let i = 0; i < 19; i++) {
      const task_id = i % 2 === 0 ? first : second;
      const { items } = await json<{ items: EvalRun[] }>(
        await cli('POST', `/agents/${agentId}/eval-runs`, { body: { task_id } }),
        201,
      );
      started.push(...items.map((r) => r.id));
    }
    expect(started).toHaveLength(57);
    const all = await finishedRuns(server, agentId, '?limit=200');
    expect(all).toHaveLength(57);
    expect(new Set(all.map((r) => r.id))).toEqual(new Set(started));
    const times = all.map((r) => r.created_at);
    expect([...times].sort().reverse()).toEqual(times);
    expect(new Set(times).size).toBe(57);
    // The newest run is the last one started.
    expect(all[0].id).toBe(started.at(-1));

    const byDefault = await finishedRuns(server, agentId);
    expect(byDefault).toEqual(all.slice(0, 50));
    expect(await finishedRuns(server, agentId, '?limit=5')).toEqual(all.slice(0, 5));
    const ofFirst = await finishedRuns(server, agentId, `?task_id=${first}`);
    expect(ofFirst).toEqual(all.filter((r) => r.task_id === first));
    expect(ofFirst).toHaveLength(30);
    expect(await finishedRuns(server, agentId, `?task_id=${second}&limit=3`)).toEqual(
      all.filter((r) => r.task_id === second).slice(0, 3),
    );
    expect(await finishedRuns(server, agentId, `?task_id=${newId()}`)).toEqual([]);
    for (const query of ['?limit=201', '?limit=0', '?limit=-1', '?limit=ten', '?task_id=nope', '?other=1']) {
      await json(await cli('GET', `/agents/${agentId}/eval-runs${query}`), 422);
    }
  });

  it('fails a run whose judge vanished (its server stopped) once it is past the judge timeout', async () => {
    const { agentId, taskId } = await agentWithTask('orphaned run');
    const evals = await publishEvals(server, agentId, [evalComponent('e', '::verdict pass ok')]);
    const id = newId();
    await server.paddock.services.store.db
      .insertInto('eval_runs')
      .values({
        id,
        agent_id: agentId,
        eval_id: evals.e.id,
        eval_name: 'e',
        eval_hash: evals.e.hash,
        task_id: taskId,
        status: 'running',
        passed: null,
        reason: null,
        error: null,
        judge_model: 'scripted',
        created_at: '2020-01-01T00:00:00.000000',
        finished_at: null,
      })
      .execute();
    const [run] = await finishedRuns(server, agentId, `?task_id=${taskId}`);
    expect(run).toMatchObject({
      id,
      status: 'failed',
      passed: null,
      error: expect.stringContaining('stopped'),
    });
  });

  it('answers 401 without a token, 403 to a read-only token on starting runs (starting none), 404 for an agent out of reach', async () => {
    const { agentId, taskId } = await agentWithTask('guarded');
    await publishEvals(server, agentId, [evalComponent('e', '::verdict pass ok')]);
    const routes = [
      ['GET', `/agents/${agentId}/evals`],
      ['GET', `/agents/${agentId}/eval-runs`],
      ['POST', `/agents/${agentId}/eval-runs`],
    ] as const;
    for (const [method, path] of routes) {
      const refused = await cli(method, path, {
        token: null,
        body: method === 'POST' ? { task_id: taskId } : undefined,
      });
      expect((await json<{ detail: string }>(refused, 401)).detail).toBe('missing bearer token');
    }
    for (const scopes of [['read'], ['admin']] as const) {
      const token = await adminTokenWith(server, [...scopes]);
      await json(await cli('GET', `/agents/${agentId}/evals`, { token }), 200);
      await json(await cli('GET', `/agents/${agentId}/eval-runs`, { token }), 200);
      const refused = await cli('POST', `/agents/${agentId}/eval-runs`, { token, body: { task_id: taskId } });
      expect((await json<{ detail: string }>(refused, 403)).detail).toBe('PAT lacks required scope: publish');
    }
    const stored = await server.paddock.services.store.db
      .selectFrom('eval_runs')
      .select('id')
      .where('agent_id', '=', agentId)
      .execute();
    expect(stored).toEqual([]);

    const outsider = (await strangerToken(server)).token;
    const theirs = await createAgent(server, { instructions: 'theirs' }, outsider);
    for (const id of [theirs.agent_id, newId()]) {
      for (const [method, path] of [
        ['GET', `/agents/${id}/evals`],
        ['GET', `/agents/${id}/eval-runs`],
        ['POST', `/agents/${id}/eval-runs`],
      ] as const) {
        const answer = await cli(method, path, { body: method === 'POST' ? { task_id: taskId } : undefined });
        expect((await json<{ detail: string }>(answer, 404)).detail).toBe('Agent not found');
      }
    }
    // Their own agent, with the admin's task: not theirs to judge.
    const refused = await cli('POST', `/agents/${theirs.agent_id}/eval-runs`, {
      token: outsider,
      body: { task_id: taskId },
    });
    expect((await json<{ detail: string }>(refused, 404)).detail).toBe('Task not found');
  });
});

describe.each(testDatabases())('eval judge behind a failing upstream on $name', (database) => {
  let upstream: Server;
  let server: TestServer;
  beforeAll(async () => {
    // The upstream provider is the seam: a real HTTP server answering every completion with an error.
    upstream = createServer((request, response) => {
      request.resume();
      response.writeHead(400, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({ error: { message: 'judge model is overloaded', type: 'invalid_request_error' } }),
      );
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const { port } = upstream.address() as AddressInfo;
    server = await startTestServer(database, {
      OPENAI_API_KEY: 'test-key',
      OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
      PADDOCK_DEFAULT_MODEL: 'scripted',
      PADDOCK_EVAL_JUDGE_MODEL: 'openai/gpt-judge',
    });
  });
  afterAll(async () => {
    await server.close();
    await new Promise((resolve) => upstream.close(resolve));
  });

  it('fails the run with the upstream error when the deployment’s judge model errs', async () => {
    const { agent_id, thread_id } = await createAgent(server, { instructions: 'upstream' });
    await publishEvals(server, agent_id, [evalComponent('e', '::verdict pass ok')]);
    const started = await json<{ items: EvalRun[] }>(
      await cliOf(server)('POST', `/agents/${agent_id}/eval-runs`, { body: { task_id: thread_id } }),
      201,
    );
    expect(started.items[0].judge_model).toBe('openai/gpt-judge');
    const [run] = await finishedRuns(server, agent_id);
    expect(run).toMatchObject({ status: 'failed', passed: null, judge_model: 'openai/gpt-judge' });
    expect(run.error).toContain('judge model is overloaded');
  });
});
