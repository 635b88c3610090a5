import type { ThreadStatus } from '@paddock/protocol';
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

/** A page of threads, newest first: of these teams, narrowed to what is given. */
export interface ThreadPageQuery {
  teamIds: readonly string[];
  agentId?: string;
  threadId?: string;
  status?: ThreadStatus;
  /** The last thread of the previous page: this page starts after it. */
  after?: { createdAt: string; id: string };
  limit: number;
}

export function listThreadPage(db: Db, query: ThreadPageQuery): Promise<ThreadRow[]> {
  if (query.teamIds.length === 0) return Promise.resolve([]);
  let select = db
    .selectFrom('threads')
    .selectAll()
    .where('team_id', 'in', [...query.teamIds]);
  if (query.agentId !== undefined) select = select.where('agent_id', '=', query.agentId);
  if (query.threadId !== undefined) select = select.where('id', '=', query.threadId);
  if (query.status !== undefined) select = select.where('status', '=', query.status);
  const after = query.after;
  if (after)
    select = select.where((eb) =>
      eb.or([
        eb('created_at', '<', after.createdAt),
        eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)]),
      ]),
    );
  return select.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(query.limit).execute();
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

/** Any column but `status`, which core's thread-status rule alone writes (`setThreadStatus`). */
export async function updateThread(
  db: Db,
  id: string,
  patch: Omit<Updateable<ThreadsTable>, 'status'>,
): Promise<void> {
  await db.updateTable('threads').set(patch).where('id', '=', id).execute();
}

/** Only for core's thread-status rule (`threads/thread-status.ts`), which decides the value. */
export async function setThreadStatus(db: Db, id: string, status: ThreadStatus): Promise<void> {
  await db.updateTable('threads').set({ status }).where('id', '=', id).execute();
}

export type RecoveryState = 'quarantined' | 'retired';

/**
 * An operator action: takes the task out of service. Its messages stay; Stop and new inputs answer
 * `task_recovery_required`, naming the replacement task when there is one.
 */
export async function quarantineThread(
  db: Db,
  id: string,
  recovery: { state: RecoveryState; replacementTaskId: string | null },
): Promise<void> {
  await updateThread(db, id, {
    recovery_state: recovery.state,
    replacement_task_id: recovery.replacementTaskId,
  });
}

type ThreadCounter = 'last_seq' | 'last_position' | 'last_input_sequence';

/**
 * Advances one of the thread's counters by `count` and answers the first value allocated. It
 * commits with whatever it numbers, so the numbers are gapless: a rolled-back transaction takes
 * its numbers with it.
 */
async function allocate(db: Db, threadId: string, counter: ThreadCounter, count: number): Promise<number> {
  const row = await db
    .updateTable('threads')
    .set((eb) => ({ [counter]: eb(counter, '+', count) }))
    .where('id', '=', threadId)
    .returning(counter)
    .executeTakeFirstOrThrow();
  return (row as Record<ThreadCounter, number>)[counter] - count + 1;
}

/** Allocates `count` consecutive message positions and answers the first. */
export const allocatePositions = (db: Db, threadId: string, count: number) =>
  allocate(db, threadId, 'last_position', count);

export const allocateInputSequence = (db: Db, threadId: string) =>
  allocate(db, threadId, 'last_input_sequence', 1);

/** The next event `seq` of a thread. */
export const allocateSeq = (db: Db, threadId: string) => allocate(db, threadId, 'last_seq', 1);

/** `count` consecutive event seqs of a thread; answers the first. */
export const allocateSeqs = (db: Db, threadId: string, count: number) =>
  allocate(db, threadId, 'last_seq', count);

/** Sets when the thread's sandbox ends for good, unless its first boot set it already; answers the value. */
export async function fixMachineExpiry(db: Db, threadId: string, expiresAt: string): Promise<string> {
  await db
    .updateTable('threads')
    .set({ machine_expires_at: expiresAt })
    .where('id', '=', threadId)
    .where('machine_expires_at', 'is', null)
    .execute();
  const row = await db
    .selectFrom('threads')
    .select('machine_expires_at')
    .where('id', '=', threadId)
    .executeTakeFirst();
  return row?.machine_expires_at ?? expiresAt;
}
