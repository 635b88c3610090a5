import { createEventLog, createInProcessEventBus, type EventLog } from '@paddock/runtime';
import type { Store } from '@paddock/store';
import { openTestStore, queuedTurnRow, seedThread, testDatabases } from '@paddock/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { turnEventWriter } from '../src/turns/event-writer.ts';

const chunk = (text: string) => ({
  type: 'assistant.message.chunk' as const,
  data: { content: [{ type: 'text' as const, content: text }] },
});

describe.each(testDatabases())("a turn's events stored in batches on $name", (database) => {
  let store: Store;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ store, close } = await openTestStore(database));
  });
  afterAll(() => close());

  /** A thread with a turn, and an event log that counts its appends (one transaction each). */
  async function turnWithLog() {
    const { threadId } = await seedThread(store);
    const turn = { ...queuedTurnRow(threadId), status: 'running' };
    await store.db.insertInto('turns').values(turn).execute();
    const log = createEventLog(store, createInProcessEventBus());
    const appends: number[] = [];
    const counted: Pick<EventLog, 'append'> = {
      append: (thread, turnId, drafts, cursor) => {
        appends.push(drafts.length);
        return log.append(thread, turnId, drafts, cursor);
      },
    };
    return { threadId, turnId: turn.id, log, counted, appends };
  }

  it('stores a burst in order with gapless seqs, in far fewer transactions than events', async () => {
    const { threadId, turnId, log, counted, appends } = await turnWithLog();
    const writer = turnEventWriter(counted, threadId, turnId, (error) => {
      throw error;
    });
    const stored: Promise<void>[] = [];
    for (let i = 0; i < 1000; i++) {
      stored.push(writer.write(chunk(`t${i} `), i));
      // A harness's chunks arrive over time: some while a write is under way.
      if (i % 100 === 99) await Promise.resolve();
    }
    await writer.flushed();
    const events = await log.after(threadId, 0, 2000);
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
    expect(events.map((e) => (e.data as { content: { content: string }[] }).content[0]!.content)).toEqual(
      Array.from({ length: 1000 }, (_, i) => `t${i} `),
    );
    expect(appends.reduce((a, b) => a + b, 0)).toBe(1000);
    expect(appends.length).toBeLessThan(20);
    // Each write's promise settled once its event was stored; the turn's cursor is the last index.
    await Promise.all(stored);
    const row = await store.db
      .selectFrom('turns')
      .select('event_cursor')
      .where('id', '=', turnId)
      .executeTakeFirstOrThrow();
    expect(row.event_cursor).toBe(999);
  });

  it('reports a failed batch and goes on writing the events after it', async () => {
    const { threadId, turnId, log } = await turnWithLog();
    const errors: unknown[] = [];
    let fail = true;
    const flaky: Pick<EventLog, 'append'> = {
      append: (thread, turn, drafts, cursor) => {
        if (fail) {
          fail = false;
          return Promise.reject(new Error('database went away'));
        }
        return log.append(thread, turn, drafts, cursor);
      },
    };
    const writer = turnEventWriter(flaky, threadId, turnId, (error) => errors.push(error));
    await writer.write(chunk('lost'));
    await writer.write(chunk('kept'));
    expect(errors).toEqual([new Error('database went away')]);
    const events = await log.after(threadId, 0, 10);
    expect(
      events.map((e) => [e.seq, (e.data as { content: { content: string }[] }).content[0]!.content]),
    ).toEqual([[1, 'kept']]);
  });
});
