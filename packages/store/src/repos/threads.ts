import type { Insertable, Selectable, Updateable } from 'kysely';
import type { ThreadsTable } from '../schema.ts';
import type { Db } from '../store.ts';

export type ThreadRow = Selectable<ThreadsTable>;

export async function insertThread(db: Db, thread: Insertable<ThreadsTable>): Promise<void> {
  await db.insertInto('threads').values(thread).execute();
}

export function findThread(db: Db, id: string): Promise<ThreadRow | undefined> {
  return db.selectFrom('threads').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Locks the thread row for the rest of the transaction (PostgreSQL row lock; SQLite has one writer)
 * by touching it, and answers the row as it now stands. Every write that orders rows within a
 * thread (messages, inputs, events) starts here, so counters never collide.
 */
export async function lockThread(db: Db, id: string, at: string): Promise<ThreadRow | undefined> {
  return db
    .updateTable('threads')
    .set({ updated_at: at })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function updateThread(db: Db, id: string, patch: Updateable<ThreadsTable>): Promise<void> {
  await db.updateTable('threads').set(patch).where('id', '=', id).execute();
}

/** Allocates `count` consecutive message positions and answers the first. */
export async function allocatePositions(db: Db, threadId: string, count: number): Promise<number> {
  const row = await db
    .updateTable('threads')
    .set((eb) => ({ last_position: eb('last_position', '+', count) }))
    .where('id', '=', threadId)
    .returning('last_position')
    .executeTakeFirstOrThrow();
  return row.last_position - count + 1;
}

export async function allocateInputSequence(db: Db, threadId: string): Promise<number> {
  const row = await db
    .updateTable('threads')
    .set((eb) => ({ last_input_sequence: eb('last_input_sequence', '+', 1) }))
    .where('id', '=', threadId)
    .returning('last_input_sequence')
    .executeTakeFirstOrThrow();
  return row.last_input_sequence;
}

/** Allocates the next event `seq` of a thread: gapless because it commits with the event it numbers. */
export async function allocateSeq(db: Db, threadId: string): Promise<number> {
  const row = await db
    .updateTable('threads')
    .set((eb) => ({ last_seq: eb('last_seq', '+', 1) }))
    .where('id', '=', threadId)
    .returning('last_seq')
    .executeTakeFirstOrThrow();
  return row.last_seq;
}
