import { reachableAgent, requireScope } from '../auth/access.ts';
import type { Ctx } from '../context.ts';
import { PaddockError } from '../errors.ts';

/**
 * A self-hosted runner (`paddock runner` on a user's own machine) connects with a token bound to one
 * agent of the `sandbox_e` provider, with `publish` (it runs that agent's turns, which write to its
 * threads). Answers the agent whose threads the runner may host.
 */
export async function admitSelfHostedRunner(ctx: Ctx): Promise<{ agentId: string }> {
  const { binding } = ctx.actor.credential;
  if (binding.type !== 'agent')
    throw new PaddockError(
      'forbidden',
      "a runner connects with the deployment's runner token or a token bound to a sandbox_e agent",
    );
  requireScope(ctx.actor, 'publish');
  const agent = await reachableAgent(ctx.store.db, ctx.actor, binding.agentId);
  if (agent.machine_kind !== 'sandbox_e')
    throw new PaddockError(
      'forbidden',
      `agent ${agent.id} runs on ${agent.machine_kind}: only sandbox_e agents have self-hosted runners`,
    );
  return { agentId: agent.id };
}
