import { newId, timestamp } from '@paddock/protocol';
import {
  enqueueTurn,
  findAgent,
  insertOrFindAgent,
  pickQueuedTurn,
  type Store,
  startTurn,
} from '@paddock/store';
import { openTestStore, seedThread, testDatabases } from '@paddock/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

function turnRow(threadId: string) {
  return {
    id: newId(),
    thread_id: threadId,
    status: 'queued',
    generation: 0,
    lease_owner: null,
    lease_expires_at: null,
    stop_reason: null,
    created_at: timestamp(),
    started_at: null,
    ended_at: null,
  };
}

describe.each(testDatabases())('store on $name', (database) => {
  let store: Store;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ store, close } = await openTestStore(database));
  });
  afterAll(() => close());

  it('keeps at most one queued turn per thread', async () => {
    const { threadId } = await seedThread(store);
    expect(await enqueueTurn(store.db, turnRow(threadId))).toBe(true);
    expect(await enqueueTurn(store.db, turnRow(threadId))).toBe(false);
    const queued = await store.db
      .selectFrom('turns')
      .select('id')
      .where('thread_id', '=', threadId)
      .execute();
    expect(queued).toHaveLength(1);
  });

  it('never runs two turns of one thread at once, and picks only threads with none running', async () => {
    const { threadId } = await seedThread(store);
    const first = turnRow(threadId);
    await enqueueTurn(store.db, first);
    const lease = { owner: 'w', expiresAt: timestamp(new Date(Date.now() + 60_000)), at: timestamp() };
    expect(await startTurn(store.db, first.id, lease)).toBe(true);
    const second = turnRow(threadId);
    await enqueueTurn(store.db, second);
    const picked = await store.transaction((trx) => pickQueuedTurn(trx, store.dialect));
    expect(picked?.thread_id).not.toBe(threadId);
    await expect(startTurn(store.db, second.id, lease)).rejects.toThrow();
  });

  it('answers one agent for concurrent creates of the same spec', async () => {
    const { agentId } = await seedThread(store);
    const seed = (await findAgent(store.db, agentId))!;
    const hash = newId();
    const agents = await Promise.all(
      Array.from({ length: 8 }, () =>
        store.transaction((trx) => insertOrFindAgent(trx, { ...seed, id: newId(), spec_hash: hash })),
      ),
    );
    expect(new Set(agents.map((a) => a.id)).size).toBe(1);
  });

  it('rolls a failed transaction back whole', async () => {
    const { threadId } = await seedThread(store);
    await expect(
      store.transaction(async (trx) => {
        await enqueueTurn(trx, turnRow(threadId));
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    const rows = await store.db.selectFrom('turns').select('id').where('thread_id', '=', threadId).execute();
    expect(rows).toEqual([]);
  });
});
