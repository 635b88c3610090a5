import { type AgentSpec, newId, timestamp } from '@paddock/protocol';
import { type AgentRow, type Db, findTeamOrgId, insertOrFindAgent } from '@paddock/store';
import type { Ctx, Services } from '../context.ts';
import { requireOfferedSize } from '../machines/machine-size.ts';
import { resolveSkills } from '../skills/resolve-skills.ts';
import { sealMcpServers } from './mcp-server-secrets.ts';
import { networkColumn, requireAllowedNetwork } from './network-policy.ts';
import { hashSpec, type NormalizedSpec, normalizeSpec } from './normalize-spec.ts';

/** D4: an agent title not given is the first line of the instructions, else the harness name. */
export function deriveAgentTitle(spec: { title?: string; instructions?: string; harness: string }): string {
  if (spec.title) return spec.title;
  const firstLine = spec.instructions
    ?.split('\n')
    .map((l) => l.trim())
    .find(Boolean);
  return firstLine ? firstLine.slice(0, 60) : spec.harness;
}

/** Finds the team's agent with this exact normalized spec, or creates it (same spec → same agent). */
export async function resolveAgent(
  ctx: Ctx,
  services: Pick<Services, 'providers' | 'secrets' | 'network'>,
  db: Db,
  teamId: string,
  spec: AgentSpec,
): Promise<AgentRow> {
  const normalized = normalizeSpec(spec);
  await checkProviderPolicy(ctx, services, db, teamId, normalized);
  // D14: registry skills must resolve when the agent is made (422 naming the source otherwise).
  await resolveSkills(db, (await findTeamOrgId(db, teamId)) ?? '', normalized.skills);
  const at = timestamp(new Date(ctx.clock.now()));
  return insertOrFindAgent(db, {
    id: newId(),
    team_id: teamId,
    owner_user_id: ctx.actor.userId,
    harness: normalized.harness,
    machine_kind: normalized.machine_kind,
    ...specColumns(services, normalized),
    created_at: at,
    updated_at: at,
  });
}

/**
 * D4's provider checks for an agent about to be created in this team (422 runtime_not_supported,
 * 503 provider_disabled, 503 provider_unavailable, 403 provider_not_in_rollout, in that order), then
 * the size (422 size_not_offered), then the deployment's network ceiling (422 network_not_allowed).
 */
export async function checkProviderPolicy(
  ctx: Ctx,
  services: Pick<Services, 'providers' | 'network'>,
  db: Db,
  teamId: string,
  spec: NormalizedSpec,
): Promise<void> {
  const orgId = (await findTeamOrgId(db, teamId)) ?? '';
  services.providers.check(spec.machine_kind, spec.harness, { userId: ctx.actor.userId, orgId });
  requireOfferedSize(spec.machine_kind, spec.machine_size);
  requireAllowedNetwork(services, spec.network);
}

/**
 * The agent columns a normalized spec sets (besides the fixed harness and machine kind): hash,
 * title, spec, sealed secrets (the agent's, and its MCP servers' header and env values), network
 * policy (null for the default).
 */
export function specColumns(services: Pick<Services, 'secrets'>, spec: NormalizedSpec) {
  const hasSecrets = Object.keys(spec.secrets).length > 0;
  return {
    spec_hash: hashSpec(spec, services.secrets.digest),
    title: deriveAgentTitle(spec),
    machine_size: spec.machine_size,
    model: spec.model ?? null,
    instructions: spec.instructions ?? null,
    entrypoint: spec.entrypoint ?? null,
    mcp_servers: sealMcpServers(services.secrets, spec.mcp_servers),
    skills: JSON.stringify(spec.skills),
    secrets_enc: hasSecrets ? services.secrets.seal(JSON.stringify(spec.secrets)) : null,
    network: networkColumn(spec.network),
  };
}
