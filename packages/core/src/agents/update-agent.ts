import { type AgentPatch, type AgentRecord, type AgentSpec, timestamp } from '@paddock/protocol';
import { type AgentRow, type Db, findAgent, findTeamOrgId, updateAgent as storeAgent } from '@paddock/store';
import { reachableAgent } from '../auth/access.ts';
import type { Ctx, Services } from '../context.ts';
import { PaddockError } from '../errors.ts';
import { requireOfferedSize } from '../machines/machine-size.ts';
import { resolveSkills } from '../skills/resolve-skills.ts';
import { mcpServerViews, openMcpServers } from './mcp-server-secrets.ts';
import { agentNetwork, requireAllowedNetwork } from './network-policy.ts';
import { canonicalJson, normalizeSpec } from './normalize-spec.ts';
import { specColumns } from './resolve-agent.ts';

/** `GET /v2/agents/{agent_id}`: the agent record PATCH answers; an agent out of reach is 404. */
export async function getAgent(
  ctx: Ctx,
  services: Pick<Services, 'secrets'>,
  { agentId }: { agentId: string },
): Promise<AgentRecord> {
  return toAgentRecord(services, await reachableAgent(ctx.store.db, ctx.actor, agentId));
}

/**
 * `PATCH /v2/agents/{agent_id}`: the given fields replace the agent's. New threads run the new
 * spec; running threads take instructions and model at their next turn, and secrets, entrypoint
 * and size at their sandbox's next boot. `harness` and `machine_kind` are fixed at creation.
 */
export async function updateAgent(
  ctx: Ctx,
  services: Pick<Services, 'secrets' | 'network'>,
  { agentId, patch }: { agentId: string; patch: AgentPatch },
): Promise<AgentRecord> {
  // The route checks the credential: `publish` for secrets, the deployment's guard for the rest, and
  // never a sandbox's own token (refuseBound).
  requireAllowedNetwork(services, patch.network ?? undefined);
  return ctx.store.transaction(async (trx) => {
    const agent = await reachableAgent(trx, ctx.actor, agentId);
    return toAgentRecord(services, await applyAgentPatch(ctx, services, trx, agent, patch));
  });
}

/**
 * Applies a spec patch to an agent (inside the caller's transaction) the one way every surface does
 * (PATCH /v2/agents, the control plane's PUT /agents, PUT secrets and manifest publish): `harness` and `machine_kind`
 * only as their current value, else 409; the spec hash recomputed, 409 when another agent of the
 * team already has exactly this spec. A patch that changes nothing leaves the agent as it is.
 * `network: null` resets the policy; the verbs that take a `network` check it against the
 * deployment's ceiling first (`requireAllowedNetwork`).
 */
export async function applyAgentPatch(
  ctx: Ctx,
  services: Pick<Services, 'secrets'>,
  trx: Db,
  agent: AgentRow,
  patch: AgentPatch,
): Promise<AgentRow> {
  for (const field of ['harness', 'machine_kind'] as const) {
    if (patch[field] !== undefined && patch[field] !== agent[field]) {
      throw new PaddockError(
        'conflict',
        `${field} is immutable after agent creation (current ${agent[field]}, requested ${patch[field]})`,
        { extra: { field, current: agent[field], requested: patch[field] } },
      );
    }
  }
  const current = specOf(services, agent);
  const next = normalizeSpec({
    ...current,
    ...withoutNulls(patch),
    ...(patch.instructions === null ? { instructions: undefined } : {}),
    ...(patch.model === null ? { model: undefined } : {}),
    ...(patch.entrypoint === null ? { entrypoint: undefined } : {}),
    ...(patch.network === null ? { network: undefined } : {}),
  });
  if (canonicalJson(next) === canonicalJson(normalizeSpec(current))) return agent;
  if (patch.machine_size !== undefined) requireOfferedSize(next.machine_kind, next.machine_size);
  // D14: registry skills given anew must resolve (422 naming the source otherwise).
  if (canonicalJson(next.skills) !== canonicalJson(JSON.parse(agent.skills)))
    await resolveSkills(trx, (await findTeamOrgId(trx, agent.team_id)) ?? '', next.skills);
  const stored = await storeAgent(trx, agent.id, {
    ...specColumns(services, next),
    updated_at: timestamp(new Date(ctx.clock.now())),
  });
  if (!stored) throw new PaddockError('conflict', 'another agent of the team already has exactly this spec');
  return (await findAgent(trx, agent.id))!;
}

/** The agent's current spec, as it was given (secrets opened), to apply a patch to. */
export function specOf(services: Pick<Services, 'secrets'>, agent: AgentRow): AgentSpec {
  return {
    harness: agent.harness as AgentSpec['harness'],
    machine_kind: agent.machine_kind as AgentSpec['machine_kind'],
    machine_size: agent.machine_size as AgentSpec['machine_size'],
    title: agent.title,
    model: agent.model ?? undefined,
    instructions: agent.instructions ?? undefined,
    entrypoint: agent.entrypoint ?? undefined,
    mcp_servers: openMcpServers(services.secrets, agent.mcp_servers),
    skills: JSON.parse(agent.skills),
    secrets: agent.secrets_enc ? JSON.parse(services.secrets.open(agent.secrets_enc)) : {},
    network: agentNetwork(agent),
  };
}

/** The fields a patch sets: `null` (clear) is applied separately, and an absent field leaves the value alone. */
function withoutNulls<T extends object>(patch: T): { [K in keyof T]: Exclude<T[K], null> } {
  return Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== null && v !== undefined)) as {
    [K in keyof T]: Exclude<T[K], null>;
  };
}

export function toAgentRecord(services: Pick<Services, 'secrets'>, agent: AgentRow): AgentRecord {
  const secrets: Record<string, string> = agent.secrets_enc
    ? JSON.parse(services.secrets.open(agent.secrets_enc))
    : {};
  return {
    id: agent.id,
    team_id: agent.team_id,
    title: agent.title,
    harness: agent.harness as AgentRecord['harness'],
    machine_kind: agent.machine_kind as AgentRecord['machine_kind'],
    machine_size: agent.machine_size as AgentRecord['machine_size'],
    model: agent.model,
    instructions: agent.instructions,
    entrypoint: agent.entrypoint,
    mcp_servers: mcpServerViews(agent.mcp_servers),
    skills: JSON.parse(agent.skills),
    secret_names: Object.keys(secrets).sort(),
    network: agentNetwork(agent),
    created_at: agent.created_at,
    updated_at: agent.updated_at,
  };
}
