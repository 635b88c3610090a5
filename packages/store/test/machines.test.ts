import { timestamp } from '@paddock/protocol';
import {
  announceMachines,
  enqueueTurn,
  findThreadHome,
  pickQueuedTurn,
  runnerElsewhere,
  type Store,
  setThreadMachine,
  withdrawMachines,
} from '@paddock/store';
import { openTestStore, queuedTurnRow, seedThread, testDatabases } from '@paddock/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

describe.each(testDatabases())('machines and thread homes on $name', (database) => {
  let store: Store;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ store, close } = await openTestStore(database));
  });
  afterAll(() => close());

  const inAMinute = () => timestamp(new Date(Date.now() + 60_000));
  const inTwoMinutes = () => timestamp(new Date(Date.now() + 120_000));
  /** Node `nodeId` (at http://<nodeId>) reaches itself and these deployment runners for a minute. */
  const announce = (nodeId: string, ...runners: string[]) =>
    announceMachines(
      store.db,
      {
        nodeId,
        nodeUrl: `http://${nodeId}`,
        machines: [{ id: nodeId, kind: 'node' }, ...runners.map((id) => ({ id, kind: 'runner' as const }))],
      },
      inAMinute(),
    );

  it('finds the live node reaching a thread’s machine, follows a runner that moved, forgets a node gone', async () => {
    const { threadId } = await seedThread(store);
    await announce('a', 'runner-1');
    await announce('b');
    // No machine yet: no home.
    expect(await findThreadHome(store.db, threadId, timestamp())).toBeUndefined();
    await setThreadMachine(store.db, threadId, 'runner-1');
    expect(await findThreadHome(store.db, threadId, timestamp())).toEqual({
      nodeId: 'a',
      nodeUrl: 'http://a',
    });
    expect(await runnerElsewhere(store.db, 'b', timestamp())).toBe(true);
    expect(await runnerElsewhere(store.db, 'a', timestamp())).toBe(false);

    // The runner reconnected to b: b announces it, and a, announcing without it, lets it go.
    await announce('b', 'runner-1');
    await announce('a');
    expect(await findThreadHome(store.db, threadId, timestamp())).toEqual({
      nodeId: 'b',
      nodeUrl: 'http://b',
    });

    // A node that stops renewing is gone once its presence lapses; one that withdraws, at once.
    expect(await findThreadHome(store.db, threadId, inTwoMinutes())).toBeUndefined();
    expect(await runnerElsewhere(store.db, 'a', inTwoMinutes())).toBe(false);
    await withdrawMachines(store.db, 'b');
    expect(await findThreadHome(store.db, threadId, timestamp())).toBeUndefined();
    await withdrawMachines(store.db, 'a');
  });

  it('leaves a queued turn to the live node that reaches its thread’s machine', async () => {
    const { threadId } = await seedThread(store);
    const turn = queuedTurnRow(threadId);
    await enqueueTurn(store.db, turn);
    const picks = async (nodeId: string, options: { newThreads?: boolean; now?: string } = {}) => {
      const node = { id: nodeId, now: options.now ?? timestamp(), newThreads: options.newThreads ?? true };
      return (await store.transaction((trx) => pickQueuedTurn(trx, store.dialect, [], node)))?.id === turn.id;
    };

    // A thread no node holds: any node with a runner for it takes it; one without leaves it.
    expect(await picks('d')).toBe(true);
    expect(await picks('d', { newThreads: false })).toBe(false);

    await setThreadMachine(store.db, threadId, 'runner-of-c');
    await announce('c', 'runner-of-c');
    expect(await picks('d')).toBe(false);
    expect(await picks('c')).toBe(true);
    expect(await picks('c', { newThreads: false })).toBe(true);
    // Without the node filter (one node), any worker takes it.
    expect((await store.transaction((trx) => pickQueuedTurn(trx, store.dialect)))?.id).toBe(turn.id);
    // Once c's presence lapsed, another node takes it, if it has a runner for it.
    expect(await picks('d', { now: inTwoMinutes() })).toBe(true);
    expect(await picks('d', { now: inTwoMinutes(), newThreads: false })).toBe(false);
    await withdrawMachines(store.db, 'c');
  });
});
