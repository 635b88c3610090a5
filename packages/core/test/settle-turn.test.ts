import type { TurnResult } from '@paddock/protocol';
import { newId, type ThreadEvent, timestamp } from '@paddock/protocol';
import { createEventLog, createInProcessEventBus, type EventLog } from '@paddock/runtime';
import {
  claimQueuedInput,
  findActiveTurns,
  findInput,
  findThread,
  findTurn,
  listMessages,
  type Store,
  type TurnRow,
} from '@paddock/store';
import { openTestStore, queuedTurnRow, seedThread, testDatabases } from '@paddock/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../src/context.ts';
import { acceptInput } from '../src/threads/accept-input.ts';
import { settleAbandonedTurn, settleTurn } from '../src/turns/settle-turn.ts';
import { noTurnTrace } from '../src/turns/turn-trace.ts';
import { noSteering, recordingLog, recordingTurnQueue } from './verb-fakes.ts';

const model = 'test-model';

describe.each(testDatabases())('settling a turn on $name', (database) => {
  let store: Store;
  let close: () => Promise<void>;
  let events: EventLog;
  beforeAll(async () => {
    ({ store, close } = await openTestStore(database));
    events = createEventLog(store, createInProcessEventBus());
  });
  afterAll(() => close());

  /** A thread with a turn running under this node's lease (or one already lapsed), and what it publishes. */
  async function runningTurn({ leaseMs = 60_000, runnerId = null as string | null } = {}) {
    const seed = await seedThread(store);
    const turn: TurnRow = {
      ...queuedTurnRow(seed.threadId),
      status: 'running',
      lease_owner: 'node:test',
      lease_expires_at: new Date(Date.now() + leaseMs).toISOString(),
      started_at: timestamp(),
      cancel_requested: 0,
      phase: 'running',
      interruptible: 1,
      runner_id: runnerId,
      event_cursor: null,
    };
    await store.db.insertInto('turns').values(turn).execute();
    await store.db
      .updateTable('threads')
      .set({ status: 'running' })
      .where('id', '=', seed.threadId)
      .execute();
    const thread = (await findThread(store.db, seed.threadId))!;
    const published: ThreadEvent[] = [];
    events.bus.subscribe(thread.id, (event) => published.push(event));
    return { thread, turn, published };
  }

  /** An input accepted while the turn runs; `steered`: offered to that turn, so no turn is queued for it. */
  async function inputDuring(threadId: string, { steered }: { steered: boolean }) {
    const ctx = { store, clock: systemClock, log: recordingLog() };
    const services = {
      events,
      sandboxLimits: { liveSandboxes: () => undefined, leaseMs: 60_000 },
      turnTrace: noTurnTrace,
      steering: noSteering,
      turnQueue: recordingTurnQueue(),
    };
    const messages = [{ role: 'user' as const, content: 'and then?' }];
    return (await acceptInput(ctx, services, { threadId, messages, run: true, steerable: steered })).input!;
  }

  const result = (overrides: Partial<TurnResult> = {}): TurnResult => ({
    stopReason: 'end_turn',
    messages: [],
    lastAssistantText: '',
    ...overrides,
  });

  const stored = async (threadId: string) => (await events.ordered(threadId, 100, false)).map((e) => e.type);

  it("stores the result's messages with the ids they were shown under, ends the turn, and the thread takes its outcome", async () => {
    const { thread, turn, published } = await runningTurn();
    const [steeredId, assistantId] = [newId(), newId()];
    await settleTurn(
      { store, events },
      {
        turn,
        thread,
        model,
        result: result({
          messages: [
            { role: 'user', content: 'also this' },
            { role: 'assistant', content: [{ type: 'text', text: 'done' }] },
          ],
          steeredIds: [steeredId],
          assistantIds: [assistantId],
          lastAssistantText: 'done',
          outcome: { status: 'success', summary: 'all done' },
        }),
      },
    );

    const messages = await listMessages(store.db, thread.id);
    expect(messages.map((m) => [m.id, m.role, m.content, m.turn_id])).toEqual([
      [steeredId, 'user', 'also this', turn.id],
      [assistantId, 'assistant', 'done', turn.id],
    ]);
    expect(JSON.parse(messages[1]!.metadata)).toEqual({ model });
    expect(await findTurn(store.db, turn.id)).toMatchObject({ status: 'completed', stop_reason: 'end_turn' });
    expect((await findThread(store.db, thread.id))?.status).toBe('success');
    expect(published.map((e) => [e.type, e.data])).toEqual([
      ['turn.ended', { stop_reason: 'end_turn' }],
      ['idle', { status: 'success', summary: 'all done' }],
    ]);
    expect(await stored(thread.id)).toEqual(['turn.ended', 'idle']);
  });

  it("the idle summary is the reported one, else the last assistant text's first 280 characters, else the error", async () => {
    const long = 'x'.repeat(300);
    const { thread, turn, published } = await runningTurn();
    await settleTurn({ store, events }, { turn, thread, model, result: result({ lastAssistantText: long }) });
    expect(published.at(-1)?.data).toEqual({ status: 'idle', summary: long.slice(0, 280) });
    expect((await findThread(store.db, thread.id))?.status).toBe('idle');

    const failed = await runningTurn();
    const error = { code: 'model_error', message: 'the model is gone', retryable: true };
    await settleTurn(
      { store, events },
      { turn: failed.turn, thread: failed.thread, model, result: result({ stopReason: 'error', error }) },
    );
    expect(failed.published.at(-1)?.data).toEqual({ status: 'fail', summary: 'the model is gone' });
    expect(await findTurn(store.db, failed.turn.id)).toMatchObject({
      status: 'failed',
      stop_reason: 'error',
    });
    expect((await findThread(store.db, failed.thread.id))?.status).toBe('fail');
  });

  it('an interrupted turn ends cancelled and leaves the thread idle', async () => {
    const { thread, turn } = await runningTurn();
    await settleTurn({ store, events }, { turn, thread, model, result: result({ stopReason: 'cancelled' }) });
    expect((await findTurn(store.db, turn.id))?.status).toBe('cancelled');
    expect((await findThread(store.db, thread.id))?.status).toBe('idle');
  });

  it('an input steered at the turn that it never took gets the next turn queued: the thread stays running', async () => {
    const { thread, turn } = await runningTurn();
    const steered = await inputDuring(thread.id, { steered: true });
    expect(await findActiveTurns(store.db, thread.id)).toHaveLength(1);

    await settleTurn({ store, events }, { turn, thread, model, result: result() });

    const [next] = await findActiveTurns(store.db, thread.id);
    expect(next).toMatchObject({ status: 'queued' });
    expect((await findInput(store.db, steered.id))?.status).toBe('queued');
    expect((await findThread(store.db, thread.id))?.status).toBe('running');
  });

  it('an input the turn claimed but never took goes back to the queue with a next turn; one it took stays with it', async () => {
    const { thread, turn } = await runningTurn();
    const untaken = await inputDuring(thread.id, { steered: true });
    const taken = await inputDuring(thread.id, { steered: true });
    for (const input of [untaken, taken]) await claimQueuedInput(store.db, input.id, turn.id, timestamp());
    const takenMessageId = JSON.parse(taken.messages)[0].id as string;

    await settleTurn(
      { store, events },
      {
        turn,
        thread,
        model,
        result: result({ messages: [{ role: 'user', content: 'and then?' }], steeredIds: [takenMessageId] }),
      },
    );

    expect(await findInput(store.db, untaken.id)).toMatchObject({ status: 'queued', turn_id: null });
    expect(await findInput(store.db, taken.id)).toMatchObject({ status: 'submitted', turn_id: turn.id });
    expect((await findActiveTurns(store.db, thread.id)).map((t) => t.status)).toEqual(['queued']);
    expect((await findThread(store.db, thread.id))?.status).toBe('running');
  });

  it('a next turn already queued for a waiting input is kept, not doubled', async () => {
    const { thread, turn } = await runningTurn();
    await inputDuring(thread.id, { steered: false });
    const queued = (await findActiveTurns(store.db, thread.id)).find((t) => t.status === 'queued')!;
    await settleTurn({ store, events }, { turn, thread, model, result: result() });
    expect((await findActiveTurns(store.db, thread.id)).map((t) => t.id)).toEqual([queued.id]);
    expect((await findThread(store.db, thread.id))?.status).toBe('running');
  });

  it('a turn another server adopted since is theirs to settle: nothing is written or published', async () => {
    const { thread, turn, published } = await runningTurn();
    await store.db
      .updateTable('turns')
      .set({ lease_owner: 'node:other' })
      .where('id', '=', turn.id)
      .execute();
    await settleTurn(
      { store, events },
      { turn, thread, model, result: result({ messages: [{ role: 'assistant', content: 'late' }] }) },
    );
    expect(await findTurn(store.db, turn.id)).toMatchObject({ status: 'running', lease_owner: 'node:other' });
    expect([await listMessages(store.db, thread.id), published, await stored(thread.id)]).toEqual([
      [],
      [],
      [],
    ]);
    expect((await findThread(store.db, thread.id))?.status).toBe('running');
  });

  it('a turn whose lease expired is settled as an error naming the lapse; one with a live lease is left alone', async () => {
    const lapsed = await runningTurn({ leaseMs: -1_000 });
    await settleAbandonedTurn({ store, events }, lapsed.turn);
    expect(await findTurn(store.db, lapsed.turn.id)).toMatchObject({
      status: 'failed',
      stop_reason: 'error',
    });
    expect((await findThread(store.db, lapsed.thread.id))?.status).toBe('fail');
    expect(lapsed.published.map((e) => [e.type, e.data.code ?? e.data.status ?? e.data.stop_reason])).toEqual(
      [
        ['error', 'lease_expired'],
        ['turn.ended', 'error'],
        ['idle', 'fail'],
      ],
    );

    const live = await runningTurn();
    await settleAbandonedTurn({ store, events }, live.turn);
    expect((await findTurn(store.db, live.turn.id))?.status).toBe('running');
    expect(live.published).toEqual([]);
  });

  it('a runner that reconnected without the turn settles it runner_lost; another runner does not', async () => {
    const { thread, turn, published } = await runningTurn({ runnerId: 'runner-a' });
    await settleAbandonedTurn({ store, events }, turn, { kind: 'runner_lost', runnerId: 'runner-b' });
    expect((await findTurn(store.db, turn.id))?.status).toBe('running');
    await settleAbandonedTurn({ store, events }, turn, { kind: 'runner_lost', runnerId: 'runner-a' });
    expect((await findTurn(store.db, turn.id))?.status).toBe('failed');
    expect(published[0]).toMatchObject({ type: 'error', data: { code: 'runner_lost', retryable: true } });
    expect((await findThread(store.db, thread.id))?.status).toBe('fail');
  });
});
