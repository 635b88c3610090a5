import { insertMessages, newMessageRows, type Store } from '@paddock/store';
import { openTestStore, seedThread, testDatabases } from '@paddock/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversationCache } from '../src/turns/conversation-cache.ts';

describe.each(testDatabases())('the conversation cache on $name', (database) => {
  let store: Store;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ store, close } = await openTestStore(database));
  });
  afterAll(() => close());

  let position = 0;
  async function append(threadId: string, ...texts: string[]) {
    const rows = newMessageRows(
      threadId,
      null,
      position,
      new Date().toISOString(),
      texts.map((content, i) => ({
        role: i % 2 ? 'assistant' : 'user',
        content,
        parts: i % 2 ? JSON.stringify([{ type: 'text', text: content }]) : null,
        metadata: {},
      })),
    );
    position += texts.length;
    await insertMessages(store.db, rows);
  }

  it('reads the whole conversation once, then only what was added, and answers it whole every time', async () => {
    const { threadId } = await seedThread(store);
    position = 0;
    const cache = conversationCache();
    await append(threadId, 'one', 'two');
    const first = await cache.read(store.db, threadId);
    expect(first).toEqual([
      { role: 'user', content: 'one' },
      { role: 'assistant', content: [{ type: 'text', text: 'two' }] },
    ]);
    // Read once: a change to a kept message (which a transcript never has) is not seen.
    await store.db
      .updateTable('messages')
      .set({ content: 'changed' })
      .where('thread_id', '=', threadId)
      .execute();
    await append(threadId, 'three', 'four');
    const second = await cache.read(store.db, threadId);
    expect(second.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(second[0]).toEqual({ role: 'user', content: 'one' });
    expect(second[2]).toEqual({ role: 'user', content: 'three' });
    // What a caller does with its array is its own.
    second.push({ role: 'user', content: 'not stored' });
    expect(await cache.read(store.db, threadId)).toHaveLength(4);
  });

  it('forgets the least recently read conversations past its size, and reads them whole again', async () => {
    const cache = conversationCache(10);
    const a = await seedThread(store);
    position = 0;
    await append(a.threadId, 'aaaaaa');
    const b = await seedThread(store);
    position = 0;
    await append(b.threadId, 'bbbbbb');
    await cache.read(store.db, a.threadId);
    expect(cache.held()).toEqual([a.threadId]);
    await cache.read(store.db, b.threadId);
    expect(cache.held()).toEqual([b.threadId]);
    // a was dropped for b; a message added to a is read with the rest of it.
    position = 1;
    await append(a.threadId, 'more');
    expect((await cache.read(store.db, a.threadId)).map((m) => m.content)).toEqual(['aaaaaa', 'more']);
    expect(await cache.read(store.db, b.threadId)).toEqual([{ role: 'user', content: 'bbbbbb' }]);
  });
});
