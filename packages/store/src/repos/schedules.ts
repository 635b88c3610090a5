import type { Insertable, Selectable } from 'kysely';
import type { SchedulesTable } from '../schema.ts';
import type { Db } from '../store.ts';

export type ScheduleRow = Selectable<SchedulesTable>;

export async function insertSchedule(db: Db, row: Insertable<SchedulesTable>): Promise<void> {
  await db.insertInto('schedules').values(row).execute();
}

/** The agent's schedules, oldest first. */
export function listSchedules(db: Db, agentId: string): Promise<ScheduleRow[]> {
  return db
    .selectFrom('schedules')
    .selectAll()
    .where('agent_id', '=', agentId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export function findSchedule(db: Db, agentId: string, id: string): Promise<ScheduleRow | undefined> {
  return db
    .selectFrom('schedules')
    .selectAll()
    .where('agent_id', '=', agentId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** A schedule's timing and input changed (a manifest's publish); `next_run_at` as the caller computed it. */
export async function updateSchedule(
  db: Db,
  id: string,
  change: Pick<ScheduleRow, 'cron' | 'time_zone' | 'input' | 'enabled' | 'next_run_at' | 'updated_at'>,
): Promise<void> {
  await db.updateTable('schedules').set(change).where('id', '=', id).execute();
}

/** Answers whether the agent had that schedule. */
export async function deleteSchedule(db: Db, agentId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('schedules')
    .where('agent_id', '=', agentId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Enabled schedules due at `now` (their `next_run_at` is not after it), most overdue first. */
export function listDueSchedules(db: Db, now: string, limit = 100): Promise<ScheduleRow[]> {
  return db
    .selectFrom('schedules')
    .selectAll()
    .where('enabled', '=', 1)
    .where('next_run_at', '<=', now)
    .orderBy('next_run_at')
    .orderBy('id')
    .limit(limit)
    .execute();
}

/**
 * Claims one fire of a schedule: moves `next_run_at` on from the value the caller read, only if it
 * still holds that value. Of any number of nodes claiming the same due time, exactly one is
 * answered true (a conditional update is atomic on both databases).
 */
export async function claimScheduleRun(
  db: Db,
  claim: { id: string; dueAt: string; nextRunAt: string; at: string },
): Promise<boolean> {
  const result = await db
    .updateTable('schedules')
    .set({ next_run_at: claim.nextRunAt, last_run_at: claim.at, updated_at: claim.at })
    .where('id', '=', claim.id)
    .where('next_run_at', '=', claim.dueAt)
    .where('enabled', '=', 1)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Records the thread a fire started. */
export async function recordScheduleThread(db: Db, id: string, threadId: string): Promise<void> {
  await db.updateTable('schedules').set({ last_thread_id: threadId }).where('id', '=', id).execute();
}
