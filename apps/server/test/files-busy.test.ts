import { setTimeout as sleep } from 'node:timers/promises';
import { testDatabases } from '@paddock/testing';
import { type Deployment, startDeployment } from '@paddock/testing/deployment';
import { afterEach, describe, expect, it } from 'vitest';
import { agentSpec, allEvents, eventSeen, json, settled } from './helpers.ts';

describe.each(testDatabases())('workspace files while a turn awaits adoption ($name)', (database) => {
  let deployment: Deployment | undefined;
  afterEach(async () => {
    await deployment?.close();
  });

  it('answers 409 task_run_busy with Retry-After while the running turn’s lease is expired, and reads once it is adopted', async () => {
    const d = await startDeployment(database, { PADDOCK_LEASE_TTL_MS: '900' });
    deployment = d;
    await d.startServer();
    d.startRunner();
    await d.runnerConnected(1);
    const { thread_id: taskId } = await json<{ thread_id: string }>(
      await d.request('POST', '/v2/threads', {
        body: { agent: agentSpec(), input: '::sh echo before > a.txt && sleep 4 && echo after > b.txt' },
      }),
      201,
    );
    await eventSeen(d, taskId, 'tool_call.start');
    expect((await d.request('GET', `/v2/tasks/${taskId}/files`)).status).toBe(200);

    // The server dies while its runner is frozen: nobody renews the turn's lease.
    d.signalRunner('SIGSTOP');
    await d.killServer('SIGKILL');
    // The lease was last renewed before the kill: it has lapsed one TTL after it.
    const leaseLapsed = Date.now() + 900 + 50;
    await d.startServer();
    await sleep(Math.max(0, leaseLapsed - Date.now()));
    const events = await allEvents(d, taskId);
    for (const route of ['', '/tree', '/content?path=a.txt']) {
      const refused = await d.request('GET', `/v2/tasks/${taskId}/files${route}`);
      expect(await json(refused, 409)).toEqual({
        detail: { code: 'task_run_busy', message: expect.any(String) },
      });
      expect(refused.headers.get('retry-after')).toBe('5');
    }
    expect(await allEvents(d, taskId)).toEqual(events);

    d.signalRunner('SIGCONT');
    await d.runnerConnected(2);
    const until = Date.now() + 20_000;
    while ((await d.request('GET', `/v2/tasks/${taskId}/files`)).status !== 200) {
      if (Date.now() > until) throw new Error('files still refused after adoption');
      await sleep(100);
    }
    await settled(d, taskId, 30_000);
    const listing = await json<{ items: { name: string }[] }>(
      await d.request('GET', `/v2/tasks/${taskId}/files`),
      200,
    );
    expect(listing.items.map((i) => i.name)).toEqual(['a.txt', 'b.txt']);
    // A server killed and restarted, a runner frozen and thawed: about 12 s alone.
  }, 120_000);
});
