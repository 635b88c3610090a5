import { type StopReason, timestamp } from '@paddock/protocol';
import {
  claimQueuedInput,
  findActiveTurns,
  findThread,
  findTurn,
  listInputs,
  lockThread,
  markTurnFinalizing,
  markTurnUninterruptible,
  quarantineThread,
  type Store,
} from '@paddock/store';
import { openTestStore, queuedTurnRow, seedThread, testDatabases } from '@paddock/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Ctx, type Services, systemClock } from '../src/context.ts';
import { acceptInput } from '../src/threads/accept-input.ts';
import { giveBackInput } from '../src/threads/give-back-input.ts';
import { interruptThread } from '../src/threads/interrupt-thread.ts';
import { endTurn } from '../src/turns/end-turn.ts';
import { noTurnTrace } from '../src/turns/turn-trace.ts';
import {
  noSteering,
  recordingLog,
  recordingSandboxHost,
  recordingTurnQueue,
  userActor,
} from './verb-fakes.ts';

/**
 * What a Stop uses, with the worker and steering recorded. `deliveriesSettled` stands for the
 * steering deliveries under way on the thread; by default there are none.
 */
function stopServices(
  store: Store,
  seed: { userId: string; teamId: string },
  { deliveriesSettled = async (_threadId: string) => false } = {},
) {
  const sandbox = recordingSandboxHost();
  const cancelled: string[] = [];
  const log = recordingLog();
  const ctx: Ctx = { actor: userActor(seed.userId, seed.teamId), store, clock: systemClock, log };
  // A Stop uses no other service: the rest stays out of the test.
  const services: Pick<Services, 'sandboxes' | 'turnQueue' | 'steering'> = {
    sandboxes: sandbox.host,
    turnQueue: { wake: () => {}, cancel: (turnId: string) => cancelled.push(turnId) > 0 },
    steering: { deliver: async () => {}, deliveriesSettled },
  };
  return { ctx, services, seen: { cancelled, orphanInterrupts: sandbox.calls.orphanInterrupts, log } };
}

const hello = [{ role: 'user' as const, content: 'hello' }];

describe.each(testDatabases())('Stop on $name', (database) => {
  let store: Store;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ store, close } = await openTestStore(database));
  });
  afterAll(() => close());

  /** An input that asks for a turn, as the routes take it (with a queued turn unless one runs and it steers). */
  async function input(threadId: string, { steerable = false } = {}) {
    const ctx = { store, clock: systemClock, log: recordingLog() };
    const services = {
      events: { publish: () => {} },
      sandboxLimits: { liveSandboxes: () => undefined, leaseMs: 60_000 },
      turnTrace: noTurnTrace,
      steering: noSteering,
      turnQueue: recordingTurnQueue(),
    };
    return (await acceptInput(ctx, services, { threadId, messages: hello, run: true, steerable })).input!;
  }

  /** A turn of the thread running under a live lease of this node. */
  async function runningTurn(threadId: string, lease = { expiresInMs: 60_000 }) {
    const at = timestamp();
    const row = {
      ...queuedTurnRow(threadId),
      status: 'running',
      lease_owner: 'node:test',
      lease_expires_at: new Date(Date.now() + lease.expiresInMs).toISOString(),
      started_at: at,
    };
    await store.db.insertInto('turns').values(row).execute();
    await store.db.updateTable('threads').set({ status: 'running' }).where('id', '=', threadId).execute();
    return row.id;
  }

  const endTurnOf = (threadId: string, turnId: string, stopReason: StopReason = 'end_turn') =>
    store.transaction(async (trx) => {
      const at = timestamp();
      await endTurn(trx, (await lockThread(trx, threadId, at))!, turnId, { stopReason }, at);
    });

  /** What a refused Stop must leave alone: the generation, the inputs, the turns. */
  const snapshot = async (threadId: string) => ({
    generation: (await findThread(store.db, threadId))!.generation,
    inputs: (await listInputs(store.db, threadId)).map((i) => [i.id, i.status]),
    turns: (await findActiveTurns(store.db, threadId)).map((t) => [t.id, t.status, t.cancel_requested]),
  });

  it('with no turn running: cancels the queued turn and the pending inputs, advances the generation, the thread idle', async () => {
    const seed = await seedThread(store);
    const { threadId } = seed;
    const pending = await input(threadId);
    const [queued] = await findActiveTurns(store.db, threadId);
    const { ctx, services, seen } = stopServices(store, seed);

    const record = await interruptThread(ctx, services, { threadId });

    expect(record).toMatchObject({ id: threadId, generation: 1, status: 'idle' });
    expect(record.cancelled_inputs).toMatchObject([
      { id: pending.id, status: 'cancelled', reason: 'interrupted', messages: [{ content: 'hello' }] },
    ]);
    expect([
      (await findTurn(store.db, queued!.id))?.status,
      await findActiveTurns(store.db, threadId),
    ]).toEqual(['cancelled', []]);
    expect(await findThread(store.db, threadId)).toMatchObject({ status: 'idle', generation: 1 });
    // No turn runs as far as the store knows: one a restart left running in the sandbox is stopped.
    expect([seen.cancelled, seen.orphanInterrupts]).toEqual([[], [threadId]]);
  });

  it('advances the generation even when there is nothing to cancel', async () => {
    const seed = await seedThread(store);
    const { ctx, services } = stopServices(store, seed);
    const record = await interruptThread(ctx, services, { threadId: seed.threadId, expectedGeneration: 0 });
    expect(record).toMatchObject({ generation: 1, cancelled_inputs: [], status: 'idle' });
  });

  it('with a turn running: asks it to cancel and leaves the thread running until it ends; no next turn for the cancelled inputs', async () => {
    const seed = await seedThread(store);
    const { threadId } = seed;
    const running = await runningTurn(threadId);
    const pending = await input(threadId);
    const queued = (await findActiveTurns(store.db, threadId)).find((t) => t.status === 'queued')!;
    const { ctx, services, seen } = stopServices(store, seed);

    const record = await interruptThread(ctx, services, { threadId, expectedGeneration: 0 });

    expect(record).toMatchObject({ generation: 1, status: 'running' });
    expect(record.cancelled_inputs.map((i) => i.id)).toEqual([pending.id]);
    expect(await findTurn(store.db, running)).toMatchObject({ status: 'running', cancel_requested: 1 });
    expect((await findTurn(store.db, queued.id))?.status).toBe('cancelled');
    expect([seen.cancelled, seen.orphanInterrupts]).toEqual([[running], []]);
    // The interrupted turn ends: nothing waits for a next one, and the thread settles.
    await endTurnOf(threadId, running, 'cancelled');
    expect(await findActiveTurns(store.db, threadId)).toEqual([]);
    expect((await findThread(store.db, threadId))?.status).toBe('idle');
  });

  it('a retry with the same expected_generation answers the same record and cancels nothing newer', async () => {
    const seed = await seedThread(store);
    const { threadId } = seed;
    const pending = await input(threadId);
    const { ctx, services, seen } = stopServices(store, seed);
    const first = await interruptThread(ctx, services, { threadId, expectedGeneration: 0 });
    const newer = await input(threadId);
    const before = await snapshot(threadId);

    const retry = await interruptThread(ctx, services, { threadId, expectedGeneration: 0 });

    expect(retry.generation).toBe(first.generation);
    expect(retry.cancelled_inputs).toEqual(first.cancelled_inputs);
    expect(retry.cancelled_inputs.map((i) => i.id)).toEqual([pending.id]);
    expect(await snapshot(threadId)).toEqual(before);
    expect(before.inputs).toContainEqual([newer.id, 'queued']);
    expect(seen.orphanInterrupts).toEqual([threadId]);
  });

  it('an expected_generation ahead is 400 invalid_input_generation and changes nothing', async () => {
    const seed = await seedThread(store);
    await input(seed.threadId);
    const before = await snapshot(seed.threadId);
    const { ctx, services, seen } = stopServices(store, seed);
    await expect(
      interruptThread(ctx, services, { threadId: seed.threadId, expectedGeneration: 1 }),
    ).rejects.toMatchObject({
      code: 'invalid_input_generation',
      retryAfter: undefined,
    });
    expect(await snapshot(seed.threadId)).toEqual(before);
    expect(seen.orphanInterrupts).toEqual([]);
  });

  it('a finalizing turn is 409 turn_interrupt_pending (retry after 1 s) and changes nothing; the same Stop after its settle succeeds', async () => {
    const seed = await seedThread(store);
    const { threadId } = seed;
    const running = await runningTurn(threadId);
    const pending = await input(threadId);
    await markTurnFinalizing(store.db, running);
    const before = await snapshot(threadId);
    const { ctx, services, seen } = stopServices(store, seed);

    await expect(interruptThread(ctx, services, { threadId, expectedGeneration: 0 })).rejects.toMatchObject({
      code: 'turn_interrupt_pending',
      retryAfter: 1,
    });
    expect(await snapshot(threadId)).toEqual(before);
    expect(seen.cancelled).toEqual([]);

    await endTurnOf(threadId, running);
    const record = await interruptThread(ctx, services, { threadId, expectedGeneration: 0 });
    expect(record).toMatchObject({ generation: 1, status: 'idle' });
    expect(record.cancelled_inputs.map((i) => i.id)).toEqual([pending.id]);
    expect(await findActiveTurns(store.db, threadId)).toEqual([]);
  });

  it('a turn that cannot be interrupted is 422 turn_interrupt_unsupported (no retry-after) and changes nothing; once it ends the same Stop succeeds', async () => {
    const seed = await seedThread(store);
    const { threadId } = seed;
    const running = await runningTurn(threadId);
    await input(threadId);
    await markTurnUninterruptible(store.db, running);
    const before = await snapshot(threadId);
    const { ctx, services, seen } = stopServices(store, seed);

    await expect(interruptThread(ctx, services, { threadId, expectedGeneration: 0 })).rejects.toMatchObject({
      code: 'turn_interrupt_unsupported',
      retryAfter: undefined,
    });
    expect(await snapshot(threadId)).toEqual(before);
    expect(seen.cancelled).toEqual([]);

    await endTurnOf(threadId, running);
    await expect(interruptThread(ctx, services, { threadId, expectedGeneration: 0 })).resolves.toMatchObject({
      generation: 1,
    });
  });

  it('a running turn outside any live lease is 503 turn_interrupt_recovery_required (no retry-after) and changes nothing', async () => {
    const seed = await seedThread(store);
    const { threadId } = seed;
    await runningTurn(threadId, { expiresInMs: -1_000 });
    await store.db.insertInto('turns').values(queuedTurnRow(threadId)).execute();
    const before = await snapshot(threadId);
    const { ctx, services, seen } = stopServices(store, seed);
    await expect(interruptThread(ctx, services, { threadId })).rejects.toMatchObject({
      code: 'turn_interrupt_recovery_required',
      retryAfter: undefined,
    });
    expect(await snapshot(threadId)).toEqual(before);
    expect([seen.cancelled, seen.orphanInterrupts]).toEqual([[], []]);
  });

  it('a quarantined task is 409 task_recovery_required with its replacement, checked before the generation', async () => {
    const seed = await seedThread(store);
    const replacement = (await seedThread(store)).threadId;
    await input(seed.threadId);
    await quarantineThread(store.db, seed.threadId, { state: 'quarantined', replacementTaskId: replacement });
    const before = await snapshot(seed.threadId);
    const { ctx, services } = stopServices(store, seed);
    await expect(
      interruptThread(ctx, services, { threadId: seed.threadId, expectedGeneration: 7 }),
    ).rejects.toMatchObject({
      code: 'task_recovery_required',
      extra: { replacement_task_id: replacement },
    });
    expect(await snapshot(seed.threadId)).toEqual(before);
  });

  it('the generation is checked before the running turn: a retry of an earlier Stop answers its record while a turn finalizes', async () => {
    const seed = await seedThread(store);
    const { threadId } = seed;
    const pending = await input(threadId);
    const { ctx, services } = stopServices(store, seed);
    await interruptThread(ctx, services, { threadId, expectedGeneration: 0 });
    const running = await runningTurn(threadId);
    await markTurnFinalizing(store.db, running);
    const retry = await interruptThread(ctx, services, { threadId, expectedGeneration: 0 });
    expect(retry.cancelled_inputs.map((i) => i.id)).toEqual([pending.id]);
  });

  it('a thread out of reach is 404 and changes nothing', async () => {
    const seed = await seedThread(store);
    const stranger = await seedThread(store);
    await input(seed.threadId);
    const before = await snapshot(seed.threadId);
    const { ctx, services } = stopServices(store, stranger);
    await expect(interruptThread(ctx, services, { threadId: seed.threadId })).rejects.toMatchObject({
      code: 'thread_not_found',
    });
    expect(await snapshot(seed.threadId)).toEqual(before);
  });

  it('a fault that is not the database failing is not answered as an unconfirmed Stop, and changes nothing', async () => {
    const seed = await seedThread(store);
    await input(seed.threadId);
    const before = await snapshot(seed.threadId);
    const { ctx, services, seen } = stopServices(store, seed);
    services.sandboxes.place = () => {
      throw new TypeError('a bug in the sandbox host');
    };
    await expect(interruptThread(ctx, services, { threadId: seed.threadId })).rejects.toThrow(TypeError);
    expect(await snapshot(seed.threadId)).toEqual(before);
    expect(seen.log.errors).toEqual([]);
  });

  it('answers after the steering deliveries under way, listing the inputs they gave back cancelled', async () => {
    const seed = await seedThread(store);
    const { threadId } = seed;
    const running = await runningTurn(threadId);
    // An input on its way into the running turn: claimed for it, not yet in the transcript.
    const steered = await input(threadId, { steerable: true });
    expect(await claimQueuedInput(store.db, steered.id, running, timestamp())).toBe(true);
    // The delivery learns after the Stop's commit that the turn did not take it, and gives it back.
    const deliveriesSettled = async () => {
      await store.transaction(async (trx) => {
        const at = timestamp();
        await giveBackInput(trx, (await lockThread(trx, threadId, at))!, steered.id, running, at);
      });
      return true;
    };
    const { ctx, services } = stopServices(store, seed, { deliveriesSettled });

    const record = await interruptThread(ctx, services, { threadId, expectedGeneration: 0 });

    expect(record.cancelled_inputs).toMatchObject([
      { id: steered.id, status: 'cancelled', reason: 'interrupted' },
    ]);
    expect(await findActiveTurns(store.db, threadId)).toMatchObject([{ id: running, status: 'running' }]);
  });
});

describe.each(testDatabases())('Stop with its database failing on $name', (database) => {
  it('is 503 turn_interrupt_unconfirmed (retry after 1 s), logged', async () => {
    const { store, close } = await openTestStore(database);
    const seed = await seedThread(store);
    const { ctx, services, seen } = stopServices(store, seed);
    await store.close();
    try {
      await expect(interruptThread(ctx, services, { threadId: seed.threadId })).rejects.toMatchObject({
        code: 'turn_interrupt_unconfirmed',
        retryAfter: 1,
      });
      expect(seen.log.errors).toEqual(['stop could not be confirmed']);
    } finally {
      await close().catch(() => {});
    }
  });
});
