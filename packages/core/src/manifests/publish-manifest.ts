import {
  type Manifest,
  type ManifestPutBody,
  type ManifestWarning,
  newId,
  type PublishedComponent,
  timestamp,
} from '@paddock/protocol';
import {
  type AgentRow,
  archiveAgentComponentsExcept,
  type Db,
  listAgentComponents,
  lockAgent,
  type StoredComponentKind,
  upsertAgentComponent,
} from '@paddock/store';
import { openMcpServers } from '../agents/mcp-server-secrets.ts';
import type { NormalizedSpec } from '../agents/normalize-spec.ts';
import { applyAgentPatch } from '../agents/update-agent.ts';
import { reachableAgent } from '../auth/access.ts';
import type { Ctx, Services } from '../context.ts';
import { agentNotFound, PaddockError } from '../errors.ts';
import { reconcileSchedules } from '../schedules/schedule-components.ts';
import { componentHash, sortedFiles } from './component-hash.ts';
import { loadManifest, loadRevision } from './load-manifest.ts';
import { carriesSkillFiles, publishSkillComponent } from './skill-component.ts';
import { readInstructions, readMcpServer, readSkill, skillComponent } from './spec-components.ts';

/**
 * `PUT /agents/{agent_id}/manifest`: replaces the agent's whole manifest in one transaction,
 * reconciled per component type. Instructions, skills and MCP servers become exactly the ones given
 * (absent ones unlinked) and are written to the runtime spec as `PATCH /v2/agents` writes it, so new
 * threads run them. Playbooks and evals given are created or updated; absent ones are archived only
 * under `reconcile_playbooks` / `reconcile_evals`; schedules likewise, under `reconcile_schedules`. With `base_revision` the agent row is locked and
 * the revision compared first: two publishes from the same revision cannot both win.
 */
export async function publishManifest(
  ctx: Ctx,
  services: Pick<Services, 'secrets'>,
  { agentId, body }: { agentId: string; body: ManifestPutBody },
): Promise<Manifest> {
  if (body.reconcile_evals && body.base_revision === undefined)
    throw new PaddockError(
      'base_revision_required',
      'reconcile_evals archives evals the manifest omits, so it needs base_revision',
    );
  return ctx.store.transaction(async (trx) => {
    await reachableAgent(trx, ctx.actor, agentId);
    const agent = (await lockAgent(trx, agentId)) ?? raise(agentNotFound());
    const current = await loadRevision(services, trx, agent);
    if (body.base_revision !== undefined && body.base_revision !== current)
      throw new PaddockError(
        'base_revision_conflict',
        'the agent changed since base_revision was read: pull, then push again',
        { extra: { base_revision: body.base_revision, current_revision: current } },
      );
    const warnings: ManifestWarning[] = [];
    const at = timestamp(new Date(ctx.clock.now()));
    await reconcileStored(trx, agent.id, 'playbook', body, body.reconcile_playbooks === true, warnings, at);
    await reconcileStored(trx, agent.id, 'eval', body, body.reconcile_evals === true, warnings, at);
    await reconcileSchedules(
      trx,
      { agentId: agent.id, userId: ctx.actor.userId, now: new Date(ctx.clock.now()), at },
      body.components,
      body.reconcile_schedules === true,
      warnings,
    );
    const spec = await specFrom(ctx, trx, services, agent, body.components, warnings);
    const stored = await applyAgentPatch(ctx, services, trx, agent, spec);
    for (const c of body.components.filter((c) => !knownTypes.has(c.type)))
      warnings.push({
        type: c.type,
        name: c.name,
        code: 'unsupported_type',
        message: `components of type ${c.type} are not supported; ignored`,
      });
    const manifest = await loadManifest(services, trx, stored);
    const all = [...(manifest.warnings ?? []), ...warnings];
    return { ...manifest, ...(all.length > 0 ? { warnings: all } : {}) };
  });
}

const knownTypes = new Set(['instructions', 'skill', 'mcp_server', 'playbook', 'eval', 'schedule']);

function raise(error: Error): never {
  throw error;
}

/**
 * The runtime spec's instructions, skills and MCP servers as the manifest gives them. A component
 * the spec cannot represent is left as it was (kept if the agent had one of that type and name)
 * and reported. A skill component with a SKILL.md is published to the registry first.
 */
async function specFrom(
  ctx: Ctx,
  trx: Db,
  services: Pick<Services, 'secrets'>,
  agent: AgentRow,
  components: PublishedComponent[],
  warnings: ManifestWarning[],
): Promise<{
  instructions: string | null;
  skills: NormalizedSpec['skills'];
  mcp_servers: NormalizedSpec['mcp_servers'];
}> {
  const skills: NormalizedSpec['skills'] = [];
  const servers: NormalizedSpec['mcp_servers'] = [];
  const currentSkills = JSON.parse(agent.skills) as NormalizedSpec['skills'];
  const currentServers = openMcpServers(services.secrets, agent.mcp_servers);
  let instructions: string | null = null;
  for (const c of components) {
    if (c.type === 'instructions') {
      const read = c.status === 'archived' ? notArchivable(c) : readInstructions(c);
      if ('value' in read) instructions = read.value;
      else {
        warnings.push(read.warning);
        instructions = agent.instructions;
      }
    } else if (c.type === 'skill') {
      // A skill's own files publish a version of it (D14); a skill.json alone names one.
      const read =
        c.status === 'archived'
          ? notArchivable(c)
          : carriesSkillFiles(c)
            ? await publishSkillComponent(ctx, trx, c)
            : readSkill(c);
      if ('value' in read) skills.push(read.value);
      else {
        warnings.push(read.warning);
        skills.push(...currentSkills.filter((s) => skillComponent(s).name === c.name));
      }
    } else if (c.type === 'mcp_server') {
      const read =
        c.status === 'archived'
          ? notArchivable(c)
          : readMcpServer(
              c,
              currentServers.find((s) => s.name === c.name),
            );
      if ('value' in read) servers.push(read.value);
      else {
        warnings.push(read.warning);
        servers.push(...currentServers.filter((s) => s.name === c.name));
      }
    }
  }
  return { instructions, skills, mcp_servers: servers };
}

function notArchivable(c: PublishedComponent) {
  return {
    warning: {
      type: c.type,
      name: c.name,
      code: 'not_archivable',
      message: `a ${c.type} cannot be archived: omit it to unlink it`,
    },
  };
}

/**
 * Playbooks or evals: the ones given are written (unchanged ones are left alone), the others
 * archived when the client reconciles that type. An eval without files has no criteria to judge by.
 */
async function reconcileStored(
  trx: Db,
  agentId: string,
  kind: StoredComponentKind,
  body: ManifestPutBody,
  reconcile: boolean,
  warnings: ManifestWarning[],
  at: string,
): Promise<void> {
  const existing = new Map(
    (await listAgentComponents(trx, agentId, [kind], { includeArchived: true })).map((r) => [r.name, r]),
  );
  const given: string[] = [];
  for (const c of body.components.filter((c) => c.type === kind)) {
    if (kind === 'eval' && c.files.length === 0) {
      warnings.push({
        type: c.type,
        name: c.name,
        code: 'eval_without_criteria',
        message: 'an eval needs at least one file: its files are the criteria the judge applies',
      });
      if (existing.get(c.name)?.status === 'active') given.push(c.name);
      continue;
    }
    given.push(c.name);
    const files = sortedFiles(c.files);
    const hash = componentHash(kind, c.name, files);
    const status = c.status ?? 'active';
    const before = existing.get(c.name);
    if (before && before.hash === hash && before.status === status) continue;
    await upsertAgentComponent(trx, {
      id: newId(),
      agent_id: agentId,
      kind,
      name: c.name,
      files: JSON.stringify(files),
      hash,
      status,
      created_at: at,
      updated_at: at,
      archived_at: status === 'archived' ? (before?.archived_at ?? at) : null,
    });
  }
  if (reconcile) await archiveAgentComponentsExcept(trx, agentId, kind, given, at);
}
