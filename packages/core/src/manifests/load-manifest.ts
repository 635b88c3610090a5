import { createHash } from 'node:crypto';
import type {
  ComponentFile,
  ComponentStatus,
  Manifest,
  ManifestComponent,
  ManifestWarning,
} from '@paddock/protocol';
import {
  type AgentComponentRow,
  type AgentRow,
  type Db,
  listAgentComponents,
  listSchedules,
  type ScheduleRow,
} from '@paddock/store';
import { mcpServerViews, openMcpServers } from '../agents/mcp-server-secrets.ts';
import { canonicalJson, type NormalizedSpec } from '../agents/normalize-spec.ts';
import type { Services } from '../context.ts';
import { scheduleComponent } from '../schedules/schedule-components.ts';
import { instructionsComponent, mcpServerComponent, skillComponent } from './spec-components.ts';

/** A playbook or eval row as a manifest component. */
export function storedComponent(row: AgentComponentRow): ManifestComponent {
  return {
    type: row.kind as 'playbook' | 'eval',
    name: row.name,
    files: JSON.parse(row.files) as ComponentFile[],
    hash: row.hash,
    status: row.status as ComponentStatus,
  };
}

/**
 * The agent's whole manifest: instructions, skills and MCP servers from its runtime spec, its
 * active playbooks and evals, its schedules, and the revision. A name the spec holds twice (possible through the
 * public API) is shown once, with a warning.
 */
export async function loadManifest(
  services: Pick<Services, 'secrets'>,
  db: Db,
  agent: AgentRow,
): Promise<Manifest> {
  const rows = await listAgentComponents(db, agent.id, ['playbook', 'eval']);
  const schedules = await listSchedules(db, agent.id);
  const warnings: ManifestWarning[] = [];
  const components: ManifestComponent[] = [];
  if (agent.instructions !== null) components.push(instructionsComponent(agent.instructions));
  const named = new Set<string>();
  const specComponents = [
    ...(JSON.parse(agent.skills) as NormalizedSpec['skills']).map(skillComponent),
    ...mcpServerViews(agent.mcp_servers).map(mcpServerComponent),
  ];
  for (const c of specComponents) {
    const key = `${c.type}\u0000${c.name}`;
    if (named.has(key)) {
      warnings.push({
        type: c.type,
        name: c.name,
        code: 'duplicate_name',
        message: `the agent's spec holds more than one ${c.type} named ${c.name}; the manifest shows the first`,
      });
      continue;
    }
    named.add(key);
    components.push(c);
  }
  // In the spec's order of types: playbooks, then evals.
  for (const kind of ['playbook', 'eval'])
    components.push(...rows.filter((r) => r.kind === kind).map(storedComponent));
  components.push(...schedules.map(scheduleComponent));
  return {
    agent_id: agent.id,
    revision: revisionOf(services, agent, rows, schedules),
    components,
    ...(warnings.length > 0 ? { warnings } : {}),
  };
}

/** `GET /agents/{id}/revision` without the rest of the manifest. */
export async function loadRevision(
  services: Pick<Services, 'secrets'>,
  db: Db,
  agent: AgentRow,
): Promise<string> {
  return revisionOf(
    services,
    agent,
    await listAgentComponents(db, agent.id, ['playbook', 'eval']),
    await listSchedules(db, agent.id),
  );
}

/**
 * The revision: SHA-256 (hex) over the instructions, skills and MCP servers as the runtime reads
 * them (their header and env values as keyed digests), the active playbooks and evals and the
 * schedules (name and content hash) and the secrets' key names, never their values. A schedule's
 * next and last run do not enter it. Integrations and the agent's other
 * fields do not enter it.
 */
function revisionOf(
  services: Pick<Services, 'secrets'>,
  agent: AgentRow,
  active: AgentComponentRow[],
  schedules: ScheduleRow[],
): string {
  const secretNames = agent.secrets_enc
    ? Object.keys(JSON.parse(services.secrets.open(agent.secrets_enc))).sort()
    : [];
  const byKind = (kind: string) =>
    active
      .filter((r) => r.kind === kind && r.status === 'active')
      .map((r) => ({ name: r.name, hash: r.hash }));
  return createHash('sha256')
    .update(
      canonicalJson({
        instructions: agent.instructions,
        skills: JSON.parse(agent.skills),
        mcp_servers: openMcpServers(services.secrets, agent.mcp_servers).map((server) => ({
          ...server,
          headers: digested(services, server.headers),
          env: digested(services, server.env),
        })),
        playbooks: byKind('playbook'),
        evals: byKind('eval'),
        // Absent while the agent has none: revisions from before schedules stay as they were.
        ...(schedules.length > 0 && {
          schedules: schedules.map((row) => ({ name: row.name, hash: scheduleComponent(row).hash })),
        }),
        secret_names: secretNames,
      }),
    )
    .digest('hex');
}

function digested(services: Pick<Services, 'secrets'>, values: Record<string, string> | undefined) {
  return (
    values && Object.fromEntries(Object.entries(values).map(([k, v]) => [k, services.secrets.digest(v)]))
  );
}
