import {
  type AgentCreateBody,
  type AgentPutBody,
  type AgentSpec,
  type ControlAgent,
  newId,
  now,
  timestamp,
} from '@paddock/protocol';
import {
  type AgentRow,
  type Db,
  findAgent,
  findOrgRole,
  findTeam,
  findTeamRole,
  insertOrFindAgent,
  listAgentIntegrations,
  updateAgentProfile,
} from '@paddock/store';
import { reachableAgent } from '../auth/access.ts';
import type { Ctx, Services } from '../context.ts';
import { PaddockError } from '../errors.ts';
import { teamNotFound } from '../orgs/orgs.ts';
import { agentNetwork, requireAllowedNetwork } from './network-policy.ts';
import { normalizeSpec } from './normalize-spec.ts';
import { checkProviderPolicy, specColumns } from './resolve-agent.ts';
import { applyAgentPatch } from './update-agent.ts';

/**
 * The control plane's agents (D13) are the same records as the agents `POST /v2/threads` makes:
 * `name` is the agent's title and `default_model` its model, both part of its spec (and hash);
 * `tagline`, `memory_enabled` and `browser_enabled` are a profile beside the spec.
 */

/** `POST /agents`: creates an agent in a team the caller belongs to. */
export async function createAgent(
  ctx: Ctx,
  services: Pick<Services, 'providers' | 'secrets' | 'network'>,
  { body }: { body: AgentCreateBody },
): Promise<ControlAgent> {
  // An agent- or thread-bound credential never creates agents: the route refuses it (refuseBound).
  return ctx.store.transaction(async (trx) => {
    const team = await findTeam(trx, body.team_id);
    if (
      !team ||
      !(await findTeamRole(trx, team.id, ctx.actor.userId)) ||
      !(await findOrgRole(trx, team.org_id, ctx.actor.userId))
    )
      throw teamNotFound();
    const spec: AgentSpec = {
      harness: body.harness,
      machine_kind: body.machine_kind,
      title: body.name,
      model: body.default_model,
      entrypoint: body.entrypoint,
      network: body.network,
    };
    const normalized = normalizeSpec(spec);
    await checkProviderPolicy(ctx, services, trx, team.id, normalized);
    const at = now();
    const id = newId();
    const row = await insertOrFindAgent(trx, {
      id,
      team_id: team.id,
      owner_user_id: ctx.actor.userId,
      harness: normalized.harness,
      machine_kind: normalized.machine_kind,
      ...specColumns(services, normalized),
      tagline: body.tagline ?? null,
      memory_enabled: body.memory_enabled ? 1 : 0,
      browser_enabled: body.browser_enabled ? 1 : 0,
      created_at: at,
      updated_at: at,
    });
    // D4: one agent per spec in a team; the control plane names it rather than answering it as new.
    if (row.id !== id)
      throw new PaddockError('conflict', `agent ${row.id} of this team already has exactly this spec`, {
        extra: { agent_id: row.id },
      });
    return (await controlAgentRecords(trx, [row]))[0]!;
  });
}

/** `GET /agents/{agent_id}`. */
export async function getControlAgent(ctx: Ctx, { agentId }: { agentId: string }): Promise<ControlAgent> {
  const agent = await reachableAgent(ctx.store.db, ctx.actor, agentId);
  return (await controlAgentRecords(ctx.store.db, [agent]))[0]!;
}

/**
 * `PUT /agents/{agent_id}` (spec rule 2): omitted fields are left alone; `name`, `default_model`
 * and `entrypoint` go through the same spec patch as `PATCH /v2/agents` (hash recomputed, 409 on a
 * clash); `machine_kind` (and `harness`) only as the current value, else 409 naming both.
 */
export async function putControlAgent(
  ctx: Ctx,
  services: Pick<Services, 'secrets' | 'network'>,
  { agentId, body }: { agentId: string; body: AgentPutBody },
): Promise<ControlAgent> {
  requireAllowedNetwork(services, body.network ?? undefined);
  return ctx.store.transaction(async (trx) => {
    let agent = await reachableAgent(trx, ctx.actor, agentId);
    agent = await applyAgentPatch(ctx, services, trx, agent, {
      title: body.name,
      model: body.default_model,
      entrypoint: body.entrypoint,
      harness: body.harness,
      machine_kind: body.machine_kind,
      network: body.network,
    });
    const profile = {
      ...(body.tagline !== undefined ? { tagline: body.tagline } : {}),
      ...(body.memory_enabled !== undefined ? { memory_enabled: body.memory_enabled ? 1 : 0 } : {}),
      ...(body.browser_enabled !== undefined ? { browser_enabled: body.browser_enabled ? 1 : 0 } : {}),
    };
    const changed = Object.entries(profile).some(([k, v]) => agent[k as keyof typeof profile] !== v);
    if (changed) {
      await updateAgentProfile(trx, agent.id, {
        ...profile,
        updated_at: timestamp(new Date(ctx.clock.now())),
      });
      agent = (await findAgent(trx, agent.id))!;
    }
    return (await controlAgentRecords(trx, [agent]))[0]!;
  });
}

/** The control-plane records of these agents, in order, with their integration flags. */
export async function controlAgentRecords(db: Db, agents: readonly AgentRow[]): Promise<ControlAgent[]> {
  const installs = await listAgentIntegrations(
    db,
    agents.map((a) => a.id),
  );
  const installed = new Set(installs.map((i) => `${i.agent_id}:${i.kind}`));
  return agents.map((agent) => ({
    id: agent.id,
    team_id: agent.team_id,
    name: agent.title,
    tagline: agent.tagline,
    entrypoint: agent.entrypoint,
    default_model: agent.model,
    memory_enabled: Boolean(agent.memory_enabled),
    browser_enabled: Boolean(agent.browser_enabled),
    harness: agent.harness as ControlAgent['harness'],
    machine_kind: agent.machine_kind as ControlAgent['machine_kind'],
    network: agentNetwork(agent),
    chat_connected: installed.has(`${agent.id}:chat`),
    meeting_connected: installed.has(`${agent.id}:meeting`),
    // Nothing connects a code host yet (it is not manageable from the CLI).
    code_host_connected: installed.has(`${agent.id}:code_host`),
    created_at: agent.created_at,
    updated_at: agent.updated_at,
  }));
}
