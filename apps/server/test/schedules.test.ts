import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fireDueSchedules } from '@paddock/core';
import { timestamp } from '@paddock/protocol';
import { openStore, type Store } from '@paddock/store';
import { createPostgresDatabase, testDatabases } from '@paddock/testing';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { cliOf, createAgent, strangerToken } from './control-plane-helpers.ts';
import { adminTokenWith, agentSpec, allEvents, json, settled } from './helpers.ts';

interface Schedule {
  id: string;
  agent_id: string;
  name: string;
  cron: string;
  time_zone: string;
  input: string;
  enabled: boolean;
  next_run_at: string;
  last_run_at: string | null;
  last_thread_id: string | null;
}

/** No standby sandbox kept booted: only the fired threads need one. */
const poll = { PADDOCK_SCHEDULE_POLL_MS: '200', PADDOCK_STANDBY_SANDBOXES: '0' };
/** An agent of its own (one spec is one agent in a team, D4). */
const ownAgent = () => agentSpec({ instructions: `You are test agent ${randomUUID()}.` });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(testDatabases())('schedules on $name', (database) => {
  let pg: { url: string; drop(): Promise<void> } | undefined;
  let server: TestServer;
  /** On PostgreSQL, a second node on the same database, polling too. */
  let peer: TestServer | undefined;
  /** A second connection to the server's database, as another node's store. */
  let second: Store;
  beforeAll(async () => {
    pg = database.name === 'postgres' ? await createPostgresDatabase(database.adminUrl) : undefined;
    const shared: Record<string, string> = pg ? { DATABASE_URL: pg.url } : {};
    server = await startTestServer(database, { ...poll, ...shared });
    if (pg) peer = await startTestServer(database, { ...poll, ...shared });
    second = await openStore({ databaseUrl: pg?.url, dataDir: server.dataDir });
  }, 30_000);
  afterAll(async () => {
    await second?.close();
    await peer?.close();
    await server?.close();
    await pg?.drop();
  });

  const schedules = (agentId: string) => `/agents/${agentId}/schedules`;
  const setDue = (id: string, at: Date) =>
    server.paddock.services.store.db
      .updateTable('schedules')
      .set({ next_run_at: timestamp(at) })
      .where('id', '=', id)
      .execute();
  const threadsOf = async (scheduleId: string) =>
    (
      await server.paddock.services.store.db.selectFrom('threads').select(['id', 'metadata']).execute()
    ).filter((t) => (JSON.parse(t.metadata) as { schedule_id?: string }).schedule_id === scheduleId);

  it('creates, lists and deletes schedules; a bad cron or time zone is a 422', async () => {
    const cli = cliOf(server);
    const { agent_id } = await createAgent(server, ownAgent());
    const created = await json<Schedule>(
      await cli('POST', schedules(agent_id), {
        body: { cron: '0 9 * * 1-5', time_zone: 'Europe/Paris', input: 'good morning' },
      }),
      201,
    );
    expect(created).toMatchObject({ agent_id, enabled: true, last_run_at: null, last_thread_id: null });
    // 09:00 in Paris is 07:00 or 08:00 UTC, on a weekday.
    const next = new Date(`${created.next_run_at}Z`);
    expect([7, 8]).toContain(next.getUTCHours());
    expect([1, 2, 3, 4, 5]).toContain(next.getUTCDay());
    const daily = await json<Schedule>(
      await cli('POST', schedules(agent_id), { body: { cron: '@daily', input: 'x', enabled: false } }),
      201,
    );
    expect(daily).toMatchObject({ time_zone: 'UTC', enabled: false });
    // Named schedule-<n> unless named; a name is the agent's only one of it.
    expect([created.name, daily.name]).toEqual(['schedule-1', 'schedule-2']);
    const named = { cron: '@daily', input: 'x', name: 'schedule-2' };
    expect((await cli('POST', schedules(agent_id), { body: named })).status).toBe(422);
    const listed = await json<{ items: Schedule[] }>(await cli('GET', schedules(agent_id)), 200);
    expect(listed.items.map((s) => s.id)).toEqual([created.id, daily.id]);

    for (const [body, field] of [
      [{ cron: 'every day', input: 'x' }, 'cron'],
      [{ cron: '* * * * * *', input: 'x' }, 'cron'],
      [{ cron: '0 0 31 2 *', input: 'x' }, 'cron'],
      [{ cron: '* * * * *', time_zone: 'Mars/Olympus', input: 'x' }, 'time_zone'],
      [{ cron: '* * * * *', input: '' }, 'input'],
      [{ cron: '* * * * *', input: 'x', name: '../up' }, 'name'],
    ] as const) {
      const refused = await json<{ detail: { loc: string[] }[] }>(
        await cli('POST', schedules(agent_id), { body }),
        422,
      );
      expect(refused.detail.map((d) => d.loc)).toContainEqual(['body', field]);
    }
    // Writes need publish; another organization's user does not see the agent.
    const reader = await adminTokenWith(server, ['read']);
    const body = { cron: '* * * * *', input: 'x' };
    expect((await cli('POST', schedules(agent_id), { body, token: reader })).status).toBe(403);
    const { token: stranger } = await strangerToken(server);
    expect((await cli('GET', schedules(agent_id), { token: stranger })).status).toBe(404);
    expect((await cli('POST', schedules(agent_id), { body, token: stranger })).status).toBe(404);

    expect((await cli('DELETE', `${schedules(agent_id)}/${created.id}`)).status).toBe(204);
    expect((await cli('DELETE', `${schedules(agent_id)}/${created.id}`)).status).toBe(404);
    const after = await json<{ items: Schedule[] }>(await cli('GET', schedules(agent_id)), 200);
    expect(after.items.map((s) => s.id)).toEqual([daily.id]);
  });

  it("are the manifest's schedule components: published, read back, in the revision, removed only when reconciled", async () => {
    const cli = cliOf(server);
    const { agent_id } = await createAgent(server, ownAgent());
    const manifest = `/agents/${agent_id}/manifest`;
    const component = (name: string, config: object) => ({
      type: 'schedule',
      name,
      files: [{ path: 'schedule.json', content: JSON.stringify(config) }],
    });
    // The agent's other components go along with every publish.
    const before = await json<{ revision: string; components: object[] }>(await cli('GET', manifest), 200);
    const rest = before.components;
    type Published = {
      revision: string;
      components: { type: string; name: string }[];
      warnings?: { code: string }[];
    };
    const published = await json<Published>(
      await cli('PUT', manifest, {
        body: {
          components: [
            ...rest,
            component('nightly', { cron: '0 2 * * *', time_zone: 'Asia/Tokyo', input: 'tidy up' }),
            component('bad', { cron: 'never', input: 'x' }),
          ],
        },
      }),
      200,
    );
    expect(published.warnings).toEqual([expect.objectContaining({ code: 'invalid_schedule' })]);
    expect(published.revision).not.toBe(before.revision);
    expect(published.components.filter((c) => c.type === 'schedule').map((c) => c.name)).toEqual(['nightly']);
    const [nightly] = (await json<{ items: Schedule[] }>(await cli('GET', schedules(agent_id)), 200)).items;
    expect(nightly).toMatchObject({
      name: 'nightly',
      cron: '0 2 * * *',
      time_zone: 'Asia/Tokyo',
      enabled: true,
    });
    // 02:00 in Tokyo is 17:00 UTC.
    expect(new Date(`${nightly!.next_run_at}Z`).getUTCHours()).toBe(17);

    // A new input alone keeps the next due time; a publish without it removes it only when reconciled.
    await json(
      await cli('PUT', manifest, {
        body: {
          components: [
            ...rest,
            component('nightly', { cron: '0 2 * * *', time_zone: 'Asia/Tokyo', input: 'tidy' }),
          ],
        },
      }),
      200,
    );
    const [edited] = (await json<{ items: Schedule[] }>(await cli('GET', schedules(agent_id)), 200)).items;
    expect(edited).toMatchObject({ id: nightly!.id, input: 'tidy', next_run_at: nightly!.next_run_at });
    await json(await cli('PUT', manifest, { body: { components: rest } }), 200);
    expect(
      (await json<{ items: Schedule[] }>(await cli('GET', schedules(agent_id)), 200)).items,
    ).toHaveLength(1);
    const emptied = await json<Published>(
      await cli('PUT', manifest, { body: { components: rest, reconcile_schedules: true } }),
      200,
    );
    expect((await json<{ items: Schedule[] }>(await cli('GET', schedules(agent_id)), 200)).items).toEqual([]);
    expect(emptied.revision).toBe(before.revision);
  });

  it('fires a due time exactly once across nodes, with an agent-bound token, and the thread runs the input', async () => {
    const cli = cliOf(server);
    const { agent_id } = await createAgent(server, ownAgent());
    // Yearly, so it comes due only when the test says so.
    const schedule = await json<Schedule>(
      await cli('POST', schedules(agent_id), { body: { cron: '0 0 1 1 *', input: '::sh echo hi' } }),
      201,
    );
    await setDue(schedule.id, new Date(Date.now() - 1000));
    // Every node's poller, and more passes at once from this node and from another connection.
    const { services } = server.paddock;
    const started = await Promise.all([
      ...Array.from({ length: 3 }, () => fireDueSchedules(services)),
      ...Array.from({ length: 3 }, () => fireDueSchedules({ ...services, store: second })),
    ]);
    const fired = await vi.waitFor(
      async () => {
        const [row] = (await json<{ items: Schedule[] }>(await cli('GET', schedules(agent_id)), 200)).items;
        if (!row?.last_thread_id) throw new Error('not fired yet');
        return row;
      },
      { timeout: 10_000, interval: 100 },
    );
    expect(started.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(1);
    expect(fired.next_run_at > timestamp()).toBe(true);
    await sleep(600);
    expect((await threadsOf(schedule.id)).map((t) => t.id)).toEqual([fired.last_thread_id]);

    // The token the fire acted with: bound to the agent, and revoked once the thread was made.
    const tokens = await server.paddock.services.store.db
      .selectFrom('tokens')
      .selectAll()
      .where('name', '=', `schedule ${schedule.id}`)
      .execute();
    expect(tokens).toHaveLength(1);
    expect(tokens[0]).toMatchObject({ kind: 'agent', agent_id, thread_id: null });
    expect(tokens[0]!.revoked_at).not.toBeNull();

    const thread = await settled(server, fired.last_thread_id!);
    expect(thread).toMatchObject({ status: 'idle', agent_id });
    const events = await allEvents(server, fired.last_thread_id!);
    const ended = events.find((e) => e.type === 'tool_call.end');
    expect(ended?.data).toMatchObject({ status: 'ok', output: 'hi\n', exit_code: 0 });
    expect(events.find((e) => e.type === 'turn.ended')?.data).toMatchObject({ stop_reason: 'end_turn' });
  }, 30_000);

  it('fires a time missed while the server was down once when it starts again, not once per missed tick', async () => {
    // A server of its own, stopped and started again on the same database and data dir.
    const dataDir = mkdtempSync(join(tmpdir(), 'paddock-schedules-'));
    const own = database.name === 'postgres' ? await createPostgresDatabase(database.adminUrl) : undefined;
    const env: Record<string, string> = {
      PADDOCK_DATA_DIR: dataDir,
      ...(own ? { DATABASE_URL: own.url } : {}),
    };
    const first = await startTestServer(database, { ...poll, ...env });
    let again: TestServer | undefined;
    const store = await openStore({ databaseUrl: own?.url, dataDir });
    try {
      const { agent_id } = await createAgent(first, ownAgent());
      const schedule = await json<Schedule>(
        await cliOf(first)('POST', schedules(agent_id), { body: { cron: '* * * * *', input: 'tick' } }),
        201,
      );
      await first.paddock.close();
      // Ten minutes of ticks missed while it was down.
      await store.db
        .updateTable('schedules')
        .set({ next_run_at: timestamp(new Date(Date.now() - 10 * 60_000)) })
        .where('id', '=', schedule.id)
        .execute();
      // It polls once at start, and not again within the test.
      const restartedAt = Date.now();
      again = await startTestServer(database, { ...poll, PADDOCK_SCHEDULE_POLL_MS: '600000', ...env });
      const fires = () =>
        store.db.selectFrom('threads').select('id').where('metadata', 'like', `%${schedule.id}%`).execute();
      await vi.waitFor(
        async () => {
          if ((await fires()).length === 0) throw new Error('not fired yet');
        },
        { timeout: 10_000, interval: 100 },
      );
      await sleep(600);
      expect(await fires()).toHaveLength(1);
      const row = await store.db
        .selectFrom('schedules')
        .selectAll()
        .where('id', '=', schedule.id)
        .executeTakeFirstOrThrow();
      // The next time is the next minute after it fired (after the restart), not the tick after the
      // first one missed.
      const next = new Date(`${row.next_run_at}Z`).getTime();
      expect(next).toBeGreaterThan(restartedAt);
      expect(next - Date.now()).toBeLessThanOrEqual(60_000);
      expect(row.last_thread_id).toBe((await fires())[0]!.id);
    } finally {
      await store.close();
      await again?.close();
      await first.close().catch(() => {});
      await own?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 40_000);
});
