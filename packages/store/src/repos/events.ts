import type { Selectable } from 'kysely';
import type { EventsTable } from '../schema.ts';
import type { Db } from '../store.ts';

export type EventRow = Selectable<EventsTable>;

export async function insertEvent(db: Db, event: EventRow): Promise<void> {
  await db.insertInto('events').values(event).execute();
}

/** Rows per statement: 8 columns each, well under SQLite's 32,766 bound parameters. */
const insertBatch = 2000;

/** Inserts events with as few statements as their number allows. */
export async function insertEvents(db: Db, events: EventRow[]): Promise<void> {
  for (let at = 0; at < events.length; at += insertBatch)
    await db
      .insertInto('events')
      .values(events.slice(at, at + insertBatch))
      .execute();
}

export function listEventsAfter(db: Db, threadId: string, after: number, limit: number): Promise<EventRow[]> {
  return db
    .selectFrom('events')
    .selectAll()
    .where('thread_id', '=', threadId)
    .where('seq', '>', after)
    .orderBy('seq')
    .limit(limit)
    .execute();
}

export function listEventsOrdered(
  db: Db,
  threadId: string,
  limit: number,
  desc: boolean,
): Promise<EventRow[]> {
  return db
    .selectFrom('events')
    .selectAll()
    .where('thread_id', '=', threadId)
    .orderBy('seq', desc ? 'desc' : 'asc')
    .limit(limit)
    .execute();
}
