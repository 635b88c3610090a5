import type { ThreadEvent } from '@paddock/protocol';
import { appendEvents, createEventLog, createInProcessEventBus } from '@paddock/runtime';
import type { Store } from '@paddock/store';
import { openTestStore, seedThread, testDatabases } from '@paddock/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

describe.each(testDatabases())('event log on $name', (database) => {
  let store: Store;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ store, close } = await openTestStore(database));
  });
  afterAll(() => close());

  it('numbers concurrent appends 1..n with no gap and publishes them in order', async () => {
    const { threadId } = await seedThread(store);
    const log = createEventLog(store, createInProcessEventBus());
    const seen: number[] = [];
    log.bus.subscribe(threadId, (e: ThreadEvent) => seen.push(e.seq));
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        log.append(threadId, null, [{ type: 'plan.update', data: { entries: [i] } }]),
      ),
    );
    const stored = await log.after(threadId, 0, 1000);
    expect(stored.map((e) => e.seq)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(seen).toEqual(stored.map((e) => e.seq));
  });

  it('takes the seq of a rolled-back append back with it', async () => {
    const { threadId } = await seedThread(store);
    const log = createEventLog(store, createInProcessEventBus());
    await log.append(threadId, null, [{ type: 'plan.update', data: { entries: [] } }]);
    await expect(
      store.transaction(async (trx) => {
        await appendEvents(trx, threadId, null, [{ type: 'plan.update', data: { entries: [] } }]);
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    await log.append(threadId, null, [{ type: 'plan.update', data: { entries: [] } }]);
    expect((await log.after(threadId, 0, 10)).map((e) => e.seq)).toEqual([1, 2]);
  });
});
