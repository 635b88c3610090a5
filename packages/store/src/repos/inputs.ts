import { type Insertable, type Selectable, sql } from 'kysely';
import type { InputsTable } from '../schema.ts';
import type { Db } from '../store.ts';

export type InputRow = Selectable<InputsTable>;

export async function insertInput(db: Db, input: Insertable<InputsTable>): Promise<void> {
  await db.insertInto('inputs').values(input).execute();
}

export function listQueuedInputs(db: Db, threadId: string): Promise<InputRow[]> {
  return db
    .selectFrom('inputs')
    .selectAll()
    .where('thread_id', '=', threadId)
    .where('status', '=', 'queued')
    .orderBy('sequence')
    .execute();
}

/** Whether an input of the thread waits for a turn it asked for (not a message kept without `run`). */
export async function hasWaitingInputs(db: Db, threadId: string): Promise<boolean> {
  const row = await db
    .selectFrom('inputs')
    .select('id')
    .where('thread_id', '=', threadId)
    .where('status', '=', 'queued')
    .where('run', '=', 1)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Threads with an input waiting for a turn and no turn queued or running to take it: every way a
 * turn ends queues the next one, so only data an older version left behind (or a bug) shows here.
 */
export async function findStrandedInputThreads(db: Db, limit = 100): Promise<string[]> {
  const rows = await db
    .selectFrom('inputs as i')
    .select('i.thread_id')
    .distinct()
    .where('i.status', '=', 'queued')
    .where('i.run', '=', 1)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('turns as t')
            .select(sql.lit(1).as('one'))
            .whereRef('t.thread_id', '=', 'i.thread_id')
            .where('t.status', 'in', ['queued', 'running']),
        ),
      ),
    )
    .limit(limit)
    .execute();
  return rows.map((r) => r.thread_id);
}

export async function markInputsSubmitted(db: Db, ids: string[], turnId: string, at: string): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('inputs')
    .set({ status: 'submitted', turn_id: turnId, updated_at: at })
    .where('id', 'in', ids)
    .execute();
}

export async function cancelInputs(db: Db, ids: string[], reason: string, at: string): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('inputs')
    .set({ status: 'cancelled', reason, updated_at: at })
    .where('id', 'in', ids)
    .execute();
}

export function listCancelledInputs(db: Db, threadId: string, generation: number): Promise<InputRow[]> {
  return db
    .selectFrom('inputs')
    .selectAll()
    .where('thread_id', '=', threadId)
    .where('status', '=', 'cancelled')
    .where('generation', '=', generation)
    .orderBy('sequence')
    .execute();
}

export function findInput(db: Db, id: string): Promise<InputRow | undefined> {
  return db.selectFrom('inputs').selectAll().where('id', '=', id).executeTakeFirst();
}

export function listInputs(db: Db, threadId: string): Promise<InputRow[]> {
  return db.selectFrom('inputs').selectAll().where('thread_id', '=', threadId).orderBy('sequence').execute();
}

/** Takes one queued input for a running turn; false when a turn start (or a Stop) got to it first. */
export async function claimQueuedInput(db: Db, id: string, turnId: string, at: string): Promise<boolean> {
  const result = await db
    .updateTable('inputs')
    .set({ status: 'submitted', turn_id: turnId, updated_at: at })
    .where('id', '=', id)
    .where('status', '=', 'queued')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Gives back an input claimed for a turn that did not take it: queued again, or cancelled (a Stop
 * came in between). False when that turn no longer holds it (it was given back already).
 */
export async function releaseClaimedInput(
  db: Db,
  id: string,
  claimedBy: string,
  outcome: 'queued' | 'cancelled',
  at: string,
): Promise<boolean> {
  const result = await db
    .updateTable('inputs')
    .set(
      outcome === 'queued'
        ? { status: 'queued', turn_id: null, updated_at: at }
        : { status: 'cancelled', reason: 'interrupted', updated_at: at },
    )
    .where('id', '=', id)
    .where('turn_id', '=', claimedBy)
    .where('status', '=', 'submitted')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Inputs a turn took (at its start, or claimed for steering into it). */
export function listInputsOfTurn(db: Db, threadId: string, turnId: string): Promise<InputRow[]> {
  return db
    .selectFrom('inputs')
    .selectAll()
    .where('thread_id', '=', threadId)
    .where('turn_id', '=', turnId)
    .where('status', '=', 'submitted')
    .orderBy('sequence')
    .execute();
}
