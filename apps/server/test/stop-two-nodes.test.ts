import { testDatabases } from '@paddock/testing';
import { startTwoNodes, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentSpec, allEvents, eventSeen, json, settled, stopTask } from './helpers.ts';

const postgres = testDatabases().find((database) => database.name === 'postgres');

/**
 * Issue 18 §2: a Stop sent to one node interrupts the turn another node runs at once, not at that
 * node's next heartbeat: both nodes renew their leases only every 40 s (a 120 s lease). A Stop
 * through the node not running the turn goes on to the node holding the thread; one it serves itself
 * (a request another node forwarded to it) reaches the turn by the nodes' signal. SQLite serves one
 * node: PostgreSQL's test.
 */
describe.skipIf(!postgres)('a Stop across two server nodes', () => {
  let a: TestServer;
  let b: TestServer;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ a, b, close } = await startTwoNodes(postgres!.name === 'postgres' ? postgres!.adminUrl : '', {
      a: { PADDOCK_LEASE_TTL_MS: '120000' },
      // B looks for queued turns at start and then only every ten minutes: the turn a request to A
      // queues mostly runs on A (on a loaded machine B's first look may still take it).
      b: { PADDOCK_LEASE_TTL_MS: '120000', PADDOCK_SWEEP_MS: '600000' },
    }));
  });
  afterAll(() => close?.());

  it.each([
    ['forwarded to the node running it', {}],
    ['served where it arrived, signalled', { 'x-paddock-forwarded-by': 'another node' }],
  ])(
    'interrupts through one node a turn the other runs (%s), and the thread settles idle',
    async (_, headers) => {
      const { thread_id } = await json<{ thread_id: string }>(
        await a.request('POST', '/v2/threads', { body: { agent: agentSpec(), input: '::sh sleep 60' } }),
        201,
      );
      await eventSeen(a, thread_id, 'tool_call.start');
      const [running, other] = a.paddock.services.sandboxes.isRunning(thread_id) ? [a, b] : [b, a];
      expect(running.paddock.services.sandboxes.isRunning(thread_id)).toBe(true);
      const stopped = await stopTask(other, thread_id, {}, headers);
      expect(stopped.status).toBe(200);
      // Well within the running node's heartbeat (40 s), with room for a loaded machine.
      const thread = await settled(other, thread_id, 15_000);
      expect(thread.status).toBe('idle');
      const ended = (await allEvents(other, thread_id)).find((e) => e.type === 'turn.ended');
      expect(ended?.data).toMatchObject({ stop_reason: 'cancelled' });
    },
  );
});
