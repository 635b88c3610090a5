import { type AgentSpec, newId, timestamp } from '@paddock/protocol';
import { type AgentRow, type Db, findTeamOrgId, insertOrFindAgent } from '@paddock/store';
import type { Ctx } from '../context.ts';
import { hashSpec, normalizeSpec } from './normalize-spec.ts';

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
export async function resolveAgent(ctx: Ctx, db: Db, teamId: string, spec: AgentSpec): Promise<AgentRow> {
  const normalized = normalizeSpec(spec);
  const orgId = (await findTeamOrgId(db, teamId)) ?? '';
  ctx.providers.check(normalized.machine_kind, normalized.harness, { userId: ctx.actor.userId, orgId });
  const at = timestamp();
  const hasSecrets = Object.keys(normalized.secrets).length > 0;
  return insertOrFindAgent(db, {
    id: newId(),
    team_id: teamId,
    owner_user_id: ctx.actor.userId,
    spec_hash: hashSpec(normalized, ctx.secrets.digest),
    title: deriveAgentTitle(normalized),
    harness: normalized.harness,
    machine_kind: normalized.machine_kind,
    machine_size: normalized.machine_size,
    model: normalized.model ?? null,
    instructions: normalized.instructions ?? null,
    entrypoint: normalized.entrypoint ?? null,
    mcp_servers: JSON.stringify(normalized.mcp_servers),
    skills: JSON.stringify(normalized.skills),
    secrets_enc: hasSecrets ? ctx.secrets.seal(JSON.stringify(normalized.secrets)) : null,
    created_at: at,
    updated_at: at,
  });
}
