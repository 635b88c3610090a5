import type { Selectable } from 'kysely';
import type { EvalRunsTable } from '../schema.ts';
import type { Db } from '../store.ts';

export type EvalRunRow = Selectable<EvalRunsTable>;

export async function insertEvalRuns(db: Db, rows: EvalRunRow[]): Promise<void> {
  if (rows.length > 0) await db.insertInto('eval_runs').values(rows).execute();
}

/** Records the judge's answer on a run still `running`; a run already finished is left alone. */
export async function finishEvalRun(
  db: Db,
  id: string,
  outcome: Pick<EvalRunRow, 'status' | 'passed' | 'reason' | 'error' | 'finished_at'>,
): Promise<void> {
  await db
    .updateTable('eval_runs')
    .set(outcome)
    .where('id', '=', id)
    .where('status', '=', 'running')
    .execute();
}

/** Fails the agent's runs still `running` that were started before `startedBefore` (their judge is gone). */
export async function failStaleEvalRuns(
  db: Db,
  agentId: string,
  startedBefore: string,
  error: string,
  at: string,
): Promise<void> {
  await db
    .updateTable('eval_runs')
    .set({ status: 'failed', error, finished_at: at })
    .where('agent_id', '=', agentId)
    .where('status', '=', 'running')
    .where('created_at', '<', startedBefore)
    .execute();
}

/** The agent's runs, newest first, optionally of one task. */
export function listEvalRuns(
  db: Db,
  agentId: string,
  options: { taskId?: string; limit: number },
): Promise<EvalRunRow[]> {
  let query = db.selectFrom('eval_runs').selectAll().where('agent_id', '=', agentId);
  if (options.taskId) query = query.where('task_id', '=', options.taskId);
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(options.limit).execute();
}
