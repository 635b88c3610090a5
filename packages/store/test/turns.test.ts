import { newId, timestamp } from '@paddock/protocol';
import {
  adoptTurn,
  claimQueuedInput,
  enqueueTurn,
  findAgent,
  findExpiredRunningTurns,
  findInput,
  insertInput,
  insertOrFindAgent,
  pickQueuedTurn,
  releaseClaimedInput,
  type Store,
  setRunner,
  startTurn,
} from '@paddock/store';
import { openTestStore, queuedTurnRow, seedThread, testDatabases } from '@paddock/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

describe.each(testDatabases())('store on $name', (database) => {
  let store: Store;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ store, close } = await openTestStore(database));
  });
  afterAll(() => close());

  it('keeps at most one queued turn per thread', async () => {
    const { threadId } = await seedThread(store);
    expect(await enqueueTurn(store.db, queuedTurnRow(threadId))).toBe(true);
    expect(await enqueueTurn(store.db, queuedTurnRow(threadId))).toBe(false);
    const queued = await store.db
      .selectFrom('turns')
      .select('id')
      .where('thread_id', '=', threadId)
      .execute();
    expect(queued).toHaveLength(1);
  });

  it('never runs two turns of one thread at once, and picks only threads with none running', async () => {
    const { threadId } = await seedThread(store);
    const first = queuedTurnRow(threadId);
    await enqueueTurn(store.db, first);
    const lease = { owner: 'w', expiresAt: timestamp(new Date(Date.now() + 60_000)), at: timestamp() };
    expect(await startTurn(store.db, first.id, lease)).toBe(true);
    const second = queuedTurnRow(threadId);
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
        await enqueueTurn(trx, queuedTurnRow(threadId));
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    const rows = await store.db.selectFrom('turns').select('id').where('thread_id', '=', threadId).execute();
    expect(rows).toEqual([]);
  });

  it('settles expired leases at once on the in-process runner, and on a detached one only after the window', async () => {
    const ago = (ms: number) => timestamp(new Date(Date.now() - ms));
    const started: string[] = [];
    for (const runner of [null, 'runner-a', 'runner-b']) {
      const { threadId } = await seedThread(store);
      const turn = queuedTurnRow(threadId);
      await enqueueTurn(store.db, turn);
      // Expired 10 s ago, except runner-b's, expired 10 min ago.
      const expiresAt = ago(runner === 'runner-b' ? 600_000 : 10_000);
      await startTurn(store.db, turn.id, { owner: 'dead', expiresAt, at: ago(700_000) });
      if (runner) await setRunner(store.db, turn.id, runner);
      started.push(turn.id);
    }
    const expired = await findExpiredRunningTurns(store.db, {
      now: timestamp(),
      adoptionCutoff: ago(180_000),
    });
    const ids = new Set(expired.map((t) => t.id));
    expect([started[0], started[1], started[2]].map((id) => ids.has(id!))).toEqual([true, false, true]);
  });

  it('adopts only a running turn, taking its lease and runner', async () => {
    const { threadId } = await seedThread(store);
    const turn = queuedTurnRow(threadId);
    await enqueueTurn(store.db, turn);
    const lease = { owner: 'old', expiresAt: timestamp(new Date(Date.now() + 60_000)), at: timestamp() };
    expect(
      await adoptTurn(store.db, turn.id, { owner: 'new', expiresAt: lease.expiresAt, runnerId: 'r' }),
    ).toBeUndefined();
    await startTurn(store.db, turn.id, lease);
    const adopted = await adoptTurn(store.db, turn.id, {
      owner: 'new',
      expiresAt: lease.expiresAt,
      runnerId: 'r',
    });
    expect(adopted).toMatchObject({ id: turn.id, status: 'running', lease_owner: 'new', runner_id: 'r' });
  });

  it('gives a claimed input back once, and only while that turn still holds it', async () => {
    const { threadId } = await seedThread(store);
    const at = timestamp();
    const input = {
      id: newId(),
      thread_id: threadId,
      status: 'queued',
      reason: null,
      turn_id: null,
      generation: 0,
      sequence: 1,
      messages: JSON.stringify([{ id: newId(), role: 'user', content: 'hi' }]),
      created_at: at,
      updated_at: at,
    };
    await insertInput(store.db, input);
    expect(await claimQueuedInput(store.db, input.id, 'turn-1', at)).toBe(true);
    expect(await releaseClaimedInput(store.db, input.id, 'turn-2', 'queued', at)).toBe(false);
    expect(await releaseClaimedInput(store.db, input.id, 'turn-1', 'queued', at)).toBe(true);
    expect(await releaseClaimedInput(store.db, input.id, 'turn-1', 'queued', at)).toBe(false);
    expect(await claimQueuedInput(store.db, input.id, 'turn-3', at)).toBe(true);
    expect(await releaseClaimedInput(store.db, input.id, 'turn-3', 'cancelled', at)).toBe(true);
    expect(await findInput(store.db, input.id)).toMatchObject({ status: 'cancelled', reason: 'interrupted' });
  });
});
