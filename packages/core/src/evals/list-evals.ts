import type { EvalDefinition, EvalRun } from '@paddock/protocol';
import { microsTimestamp, timestamp } from '@paddock/protocol';
import { failStaleEvalRuns, listAgentComponents, listEvalRuns as storedRuns } from '@paddock/store';
import { reachableAgent } from '../auth/access.ts';
import type { Ctx } from '../context.ts';
import { toEvalDefinition, toEvalRun } from './eval-views.ts';
import { judgeTimeoutMs } from './judge-eval-runs.ts';

/** `GET /agents/{agent_id}/evals`: active evals, archived ones too when asked. */
export async function listEvals(
  ctx: Ctx,
  { agentId, includeArchived }: { agentId: string; includeArchived: boolean },
): Promise<{ items: EvalDefinition[] }> {
  const agent = await reachableAgent(ctx.store.db, ctx.actor, agentId);
  const rows = await listAgentComponents(ctx.store.db, agent.id, ['eval'], { includeArchived });
  return { items: rows.map(toEvalDefinition) };
}

/**
 * `GET /agents/{agent_id}/eval-runs`: newest first, optionally of one task. A run still `running`
 * well past the judge's timeout lost its judge (its server stopped): it is failed first.
 */
export async function listEvalRuns(
  ctx: Ctx,
  { agentId, taskId, limit }: { agentId: string; taskId?: string; limit: number },
): Promise<{ items: EvalRun[] }> {
  const agent = await reachableAgent(ctx.store.db, ctx.actor, agentId);
  const now = ctx.clock.now();
  const staleBefore = microsTimestamp((now - 2 * judgeTimeoutMs) * 1000);
  await failStaleEvalRuns(
    ctx.store.db,
    agent.id,
    staleBefore,
    'the judge did not answer (its server stopped before it finished)',
    timestamp(new Date(now)),
  );
  const rows = await storedRuns(ctx.store.db, agent.id, { taskId, limit });
  return { items: rows.map(toEvalRun) };
}
