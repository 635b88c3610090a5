import type { ComponentFile } from '@paddock/protocol';
import { type EvalRun, type EvalRunsStartBody, newId, now } from '@paddock/protocol';
import { type EvalRunRow, insertEvalRuns, listAgentComponents } from '@paddock/store';
import { reachableAgent, reachableThread } from '../auth/access.ts';
import type { Ctx } from '../context.ts';
import { PaddockError, taskNotFound } from '../errors.ts';
import { evalCriteria, toEvalRun } from './eval-views.ts';
import { type JudgeJob, type JudgeServices, judgeEvalRuns } from './judge-eval-runs.ts';

/**
 * `POST /agents/{agent_id}/eval-runs` (beyond the spec's table): starts one run per active eval
 * of the agent (or per eval named) on one of its tasks. The runs answer `running`; the judge
 * settles each in the background.
 */
export async function startEvalRuns(
  ctx: Ctx,
  services: JudgeServices,
  { agentId, body }: { agentId: string; body: EvalRunsStartBody },
): Promise<{ items: EvalRun[] }> {
  const model = body.judge_model ?? services.judge.defaultModel;
  const jobs: JudgeJob[] = [];
  const rows = await ctx.store.transaction(async (trx) => {
    const agent = await reachableAgent(trx, ctx.actor, agentId);
    const task = await reachableThread(trx, ctx.actor, body.task_id).catch((error: unknown) => {
      throw error instanceof PaddockError && error.code === 'thread_not_found' ? taskNotFound() : error;
    });
    if (task.agent_id !== agent.id) throw taskNotFound();
    const active = await listAgentComponents(trx, agent.id, ['eval']);
    const evals = body.eval_ids ? body.eval_ids.map((id) => active.find((e) => e.id === id)) : active;
    if (evals.some((e) => e === undefined)) throw new PaddockError('eval_not_found', 'Eval not found');
    const runs: EvalRunRow[] = evals.map((e) => ({
      id: newId(),
      agent_id: agent.id,
      eval_id: e!.id,
      eval_name: e!.name,
      eval_hash: e!.hash,
      task_id: task.id,
      status: 'running',
      passed: null,
      reason: null,
      error: null,
      judge_model: model,
      created_at: now(),
      finished_at: null,
    }));
    await insertEvalRuns(trx, runs);
    for (const [i, run] of runs.entries())
      jobs.push({
        runId: run.id,
        taskId: task.id,
        criteria: evalCriteria(JSON.parse(evals[i]!.files) as ComponentFile[]),
        model,
      });
    return runs;
  });
  void judgeEvalRuns(services, jobs);
  return { items: rows.map(toEvalRun) };
}
