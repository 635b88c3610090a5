import { timestamp } from '@paddock/protocol';
import {
  findActiveTurns,
  findThread,
  listInputs,
  listMessages,
  markInputsSubmitted,
  type Store,
} from '@paddock/store';
import { openTestStore, queuedTurnRow, seedThread, testDatabases } from '@paddock/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../src/context.ts';
import { acceptInput, type InputServices } from '../src/threads/accept-input.ts';
import { deliverMessages } from '../src/threads/deliver-messages.ts';
import { inputMessages } from '../src/threads/input-receipt.ts';
import { endTurn } from '../src/turns/end-turn.ts';
import { noTurnTrace } from '../src/turns/turn-trace.ts';

/** The services taking an input uses, recording what it asks of the worker, steering and event bus. */
function servicesOf(store: Store) {
  const seen = { wakes: 0, published: [] as string[], delivered: [] as string[][] };
  const ctx = { store, clock: systemClock, log: { info: () => {}, warn: () => {}, error: () => {} } };
  const services: InputServices = {
    events: { publish: (events) => seen.published.push(...events.map((e) => e.type)) },
    sandboxLimits: { liveSandboxes: () => undefined, leaseMs: 60_000 },
    turnTrace: noTurnTrace,
    turnQueue: { wake: () => void seen.wakes++, cancel: () => false },
    steering: {
      deliver: async (...args) => void seen.delivered.push(args),
      deliveriesSettled: async () => false,
    },
  };
  return { ctx, services, seen };
}

const hello = [{ role: 'user' as const, content: 'hello' }];

describe.each(testDatabases())('accepting an input on $name', (database) => {
  let store: Store;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ store, close } = await openTestStore(database));
  });
  afterAll(() => close());

  const status = async (threadId: string) => (await findThread(store.db, threadId))?.status;

  it('with run on a settled thread: a durable input, a queued turn, the thread running, the worker woken', async () => {
    const { threadId } = await seedThread(store);
    const { ctx, services, seen } = servicesOf(store);
    const accepted = await acceptInput(ctx, services, {
      threadId,
      messages: hello,
      run: true,
      steerable: true,
    });
    const [turn] = await findActiveTurns(store.db, threadId);
    expect(turn?.status).toBe('queued');
    expect(accepted).toMatchObject({ runStarted: true, turnId: turn!.id, replayed: false });
    expect((await listInputs(store.db, threadId)).map((i) => [i.id, i.status])).toEqual([
      [accepted.input!.id, 'queued'],
    ]);
    expect(await status(threadId)).toBe('running');
    expect(seen.wakes).toBe(1);

    // A second input joins the queued turn: no second turn, nothing to wake.
    const second = await acceptInput(ctx, services, {
      threadId,
      messages: hello,
      run: true,
      steerable: true,
    });
    expect(second).toMatchObject({ runStarted: false, turnId: turn!.id });
    expect(await findActiveTurns(store.db, threadId)).toHaveLength(1);
    expect(seen.wakes).toBe(1);

    // A turn that ends before taking the inputs leaves a next turn for them: the thread stays running.
    const end = async (turnId: string, take: boolean) =>
      store.transaction(async (trx) => {
        const thread = (await findThread(trx, threadId))!;
        if (take) {
          // As the turn executor takes them: into the transcript, the inputs submitted.
          const inputs = await listInputs(trx, threadId);
          await deliverMessages(trx, threadId, inputs.flatMap(inputMessages), turnId, timestamp());
          const ids = inputs.map((i) => i.id);
          await markInputsSubmitted(trx, ids, turnId, timestamp());
        }
        await endTurn(trx, thread, turnId, { stopReason: 'end_turn', outcome: 'success' }, timestamp());
      });
    await end(turn!.id, false);
    const [next] = await findActiveTurns(store.db, threadId);
    expect([next?.status, await status(threadId)]).toEqual(['queued', 'running']);
    // The last turn ends having taken them: the thread takes its outcome.
    await end(next!.id, true);
    expect([await findActiveTurns(store.db, threadId), await status(threadId)]).toEqual([[], 'success']);
  });

  it('without run on a settled thread: the messages join the transcript at once, with their events', async () => {
    const { threadId } = await seedThread(store);
    const { ctx, services, seen } = servicesOf(store);
    const accepted = await acceptInput(ctx, services, {
      threadId,
      messages: hello,
      run: false,
      steerable: false,
    });
    expect(accepted.input).toBeUndefined();
    expect(accepted).toMatchObject({ runStarted: false, turnId: null });
    expect((await listMessages(store.db, threadId)).map((m) => m.id)).toEqual([accepted.messages[0]!.id]);
    expect(await listInputs(store.db, threadId)).toEqual([]);
    expect(seen.published).toEqual(['user.message']);
    expect(await status(threadId)).toBe('idle');
  });

  it('answers a replayed input as it stands and writes nothing', async () => {
    const { threadId } = await seedThread(store);
    const { ctx, services, seen } = servicesOf(store);
    const first = await acceptInput(ctx, services, { threadId, messages: hello, run: true, steerable: true });
    const again = await acceptInput(ctx, services, {
      threadId,
      messages: hello,
      run: true,
      steerable: true,
      replay: async () => first.input,
    });
    expect(again).toMatchObject({ replayed: true, runStarted: false, turnId: first.turnId });
    expect(again.messages).toEqual(first.messages);
    expect(await listInputs(store.db, threadId)).toHaveLength(1);
    expect(seen.wakes).toBe(1);
  });

  it('steers an input into the running turn, after the commit, when no other input waits', async () => {
    const { threadId } = await seedThread(store);
    const running = { ...queuedTurnRow(threadId), status: 'running' };
    await store.db.insertInto('turns').values(running).execute();
    const { ctx, services, seen } = servicesOf(store);
    const steered = await acceptInput(ctx, services, {
      threadId,
      messages: hello,
      run: true,
      steerable: true,
    });
    expect(steered).toMatchObject({ runStarted: false, turnId: running.id });
    expect(seen.delivered).toEqual([[threadId, running.id, steered.input!.id]]);
    // One that may not join it (e.g. it sets model options) waits for a next turn, queued for it.
    const waits = await acceptInput(ctx, services, {
      threadId,
      messages: hello,
      run: true,
      steerable: false,
    });
    const queued = (await findActiveTurns(store.db, threadId)).find((t) => t.status === 'queued');
    expect(waits.turnId).toBe(queued?.id);
    expect(seen.delivered).toHaveLength(1);
  });
});
