import { type AgentRecord, envNameSchema } from '@paddock/protocol';
import { reachableAgent } from '../auth/access.ts';
import type { Ctx, Services } from '../context.ts';
import { PaddockError } from '../errors.ts';
import { applyAgentPatch, specOf, toAgentRecord } from './update-agent.ts';

/** `GET /agents/{agent_id}/secrets`: the agent's secrets in plaintext (sealed at rest). */
export async function getAgentSecrets(
  ctx: Ctx,
  services: Pick<Services, 'secrets'>,
  { agentId }: { agentId: string },
): Promise<{ secrets: Record<string, string> }> {
  // An agent key reads its own agent's secrets, never an orchestration peer's.
  const agent = await reachableAgent(ctx.store.db, ctx.actor, agentId, { peers: false });
  return { secrets: specOf(services, agent).secrets ?? {} };
}

/**
 * `PUT /agents/{agent_id}/secrets` (spec rule 4): replaces the whole map, omitted keys removed. Keys
 * must be environment-variable names, else 400 naming the bad ones. The same spec patch as
 * `PATCH /v2/agents` `secrets`: sealed, and the spec hash recomputed (a changed value gives a new hash).
 */
export async function putAgentSecrets(
  ctx: Ctx,
  services: Pick<Services, 'secrets'>,
  { agentId, secrets }: { agentId: string; secrets: Record<string, string> },
): Promise<{ secrets: Record<string, string> }> {
  const invalid = Object.keys(secrets).filter((name) => !envNameSchema.safeParse(name).success);
  if (invalid.length > 0)
    throw new PaddockError(
      'invalid_env_name',
      `secret names must be valid environment-variable names ([A-Za-z_][A-Za-z0-9_]*): ${invalid.map((n) => JSON.stringify(n)).join(', ')}`,
      { extra: { names: invalid } },
    );
  return ctx.store.transaction(async (trx) => {
    const agent = await reachableAgent(trx, ctx.actor, agentId, { peers: false });
    const updated = await applyAgentPatch(ctx, services, trx, agent, { secrets });
    return { secrets: specOf(services, updated).secrets ?? {} };
  });
}

/**
 * `PUT /v2/agents/{agent_id}/secrets/{secret_name}` and `DELETE …` (beyond the spec): sets or removes one
 * secret, keeping the others, and answers the agent with secret names only, so a client (the web
 * app) replaces a value without ever reading one.
 */
export async function setAgentSecret(
  ctx: Ctx,
  services: Pick<Services, 'secrets'>,
  { agentId, name, value }: { agentId: string; name: string; value: string | null },
): Promise<AgentRecord> {
  return ctx.store.transaction(async (trx) => {
    const agent = await reachableAgent(trx, ctx.actor, agentId, { peers: false });
    const { [name]: _old, ...others } = specOf(services, agent).secrets ?? {};
    const secrets = value === null ? others : { ...others, [name]: value };
    return toAgentRecord(services, await applyAgentPatch(ctx, services, trx, agent, { secrets }));
  });
}
