import { type DraftEvent, newId, now, type ThreadEvent } from '@paddock/protocol';
import {
  allocateSeqs,
  type Db,
  type EventRow,
  insertEvents,
  listEventsAfter,
  listEventsOrdered,
  type Store,
  setEventCursor,
} from '@paddock/store';
import type { EventBus } from './event-bus.ts';

export function toThreadEvent(row: EventRow): ThreadEvent {
  return {
    id: row.id,
    seq: row.seq,
    type: row.type,
    thread_id: row.thread_id,
    turn_id: row.turn_id,
    tool_id: row.tool_id,
    ts: row.ts,
    data: JSON.parse(row.data),
  };
}

/**
 * Appends events inside a caller's transaction. The seq comes from the thread row, so it is
 * gapless: a rolled-back transaction takes its seq with it.
 */
export async function appendEvents(
  db: Db,
  threadId: string,
  turnId: string | null,
  drafts: DraftEvent[],
): Promise<ThreadEvent[]> {
  if (drafts.length === 0) return [];
  const first = await allocateSeqs(db, threadId, drafts.length);
  const rows = drafts.map(
    (draft, i): EventRow => ({
      id: newId(),
      thread_id: threadId,
      seq: first + i,
      type: draft.type,
      turn_id: turnId,
      tool_id: draft.tool_id ?? null,
      data: JSON.stringify(draft.data),
      ts: now(),
    }),
  );
  await insertEvents(db, rows);
  return rows.map(({ data: _, ...row }, i) => ({ ...row, data: drafts[i]!.data }) as ThreadEvent);
}

export interface EventLog {
  /**
   * Appends in a transaction of its own and publishes once committed. `cursor` (a detached runner's
   * index of the last of these events) is stored on the turn in the same transaction.
   */
  append(
    threadId: string,
    turnId: string | null,
    drafts: DraftEvent[],
    cursor?: number,
  ): Promise<ThreadEvent[]>;
  /** Publishes events a caller appended in its own, now committed, transaction. */
  publish(events: ThreadEvent[]): void;
  after(threadId: string, after: number, limit: number): Promise<ThreadEvent[]>;
  ordered(threadId: string, limit: number, desc: boolean): Promise<ThreadEvent[]>;
  readonly bus: EventBus;
}

export function createEventLog(store: Store, bus: EventBus): EventLog {
  // Appends of one thread are chained so that they publish in seq order within this process.
  const tails = new Map<string, Promise<unknown>>();
  return {
    bus,
    append(threadId, turnId, drafts, cursor) {
      const previous = tails.get(threadId) ?? Promise.resolve();
      const next = previous.then(async () => {
        const events = await store.transaction(async (trx) => {
          const appended = await appendEvents(trx, threadId, turnId, drafts);
          if (cursor !== undefined && turnId) await setEventCursor(trx, turnId, cursor);
          return appended;
        });
        for (const event of events) bus.publish(event);
        return events;
      });
      const tail = next.catch(() => undefined);
      tails.set(threadId, tail);
      void tail.then(() => {
        if (tails.get(threadId) === tail) tails.delete(threadId);
      });
      return next;
    },
    publish(events) {
      for (const event of events) bus.publish(event);
    },
    async after(threadId, after, limit) {
      return (await listEventsAfter(store.db, threadId, after, limit)).map(toThreadEvent);
    },
    async ordered(threadId, limit, desc) {
      return (await listEventsOrdered(store.db, threadId, limit, desc)).map(toThreadEvent);
    },
  };
}
