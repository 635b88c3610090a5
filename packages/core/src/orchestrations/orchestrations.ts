import {
  newId,
  type OrchestrationCreateBody,
  type OrchestrationRecord,
  type OrchestrationUpdateBody,
  timestamp,
} from '@paddock/protocol';
import {
  type Db,
  findAgent,
  findOrchestration,
  findTeamOrgId,
  insertOrchestration,
  isOrgMember,
  listOrchestrationGraphs,
  listTeamOrchestrations,
  type OrchestrationEdge,
  type OrchestrationMember,
  type OrchestrationRow,
  replaceOrchestrationEdges,
  replaceOrchestrationMembers,
  updateOrchestrationIf,
} from '@paddock/store';
import type { Actor, Ctx, Services } from '../context.ts';
import { PaddockError } from '../errors.ts';
import { loadManifest } from '../manifests/load-manifest.ts';
import { agentHasTeamAccess } from '../orgs/team-agents.ts';
import { orchestrationRevision } from './revision.ts';

/**
 * Orchestrations (D13): a team's graph of agents. Every route refuses resource-bound credentials
 * before these run; here the caller must belong to the orchestration's team (and its organization),
 * else 404, absent and unreachable alike.
 */
export async function listOrchestrations(
  ctx: Ctx,
  input: { orgId: string; teamId: string },
): Promise<{ items: OrchestrationRecord[] }> {
  await reachableTeam(ctx.store.db, ctx.actor, input.teamId, input.orgId);
  const rows = await listTeamOrchestrations(ctx.store.db, input.teamId);
  const graphs = await listOrchestrationGraphs(
    ctx.store.db,
    rows.map((r) => r.id),
  );
  return { items: rows.map((row) => record(row, graphs.get(row.id)!)) };
}

export async function createOrchestration(
  ctx: Ctx,
  { body }: { body: OrchestrationCreateBody },
): Promise<OrchestrationRecord> {
  await reachableTeam(ctx.store.db, ctx.actor, body.team_id);
  const graph = {
    members: body.members.map((m) => ({ agent_id: m.agent_id, role: m.role ?? null })),
    edges: body.edges,
  };
  const now = timestamp(new Date(ctx.clock.now()));
  const row: OrchestrationRow = {
    id: newId(),
    team_id: body.team_id,
    name: body.name,
    revision: orchestrationRevision({ name: body.name, ...graph }),
    created_by: ctx.actor.userId,
    created_at: now,
    updated_at: now,
  };
  await ctx.store.transaction(async (trx) => {
    await checkGraph(trx, body.team_id, graph.members, graph.edges);
    await insertOrchestration(trx, row);
    await replaceOrchestrationMembers(trx, row.id, graph.members);
    await replaceOrchestrationEdges(trx, row.id, graph.edges);
  });
  return record(row, graph);
}

export async function getOrchestration(
  ctx: Ctx,
  input: { orchestrationId: string },
): Promise<OrchestrationRecord> {
  const row = await reachableOrchestration(ctx.store.db, ctx.actor, input.orchestrationId);
  const graphs = await listOrchestrationGraphs(ctx.store.db, [row.id]);
  return record(row, graphs.get(row.id)!);
}

/** The orchestration with each member's manifest inlined in `members[].manifest`. */
export async function getOrchestrationManifest(
  ctx: Ctx,
  services: Pick<Services, 'secrets'>,
  input: { orchestrationId: string },
) {
  const orchestration = await getOrchestration(ctx, input);
  const members = await Promise.all(
    orchestration.members.map(async (member) => {
      const agent = await findAgent(ctx.store.db, member.agent_id);
      // The same manifest `GET /agents/{id}/manifest` answers for the member.
      return { ...member, manifest: agent ? await loadManifest(services, ctx.store.db, agent) : {} };
    }),
  );
  return { ...orchestration, members };
}

/**
 * A partial update: `name` when given; `members` and `edges` replace the whole list when given.
 * With `base_revision`, a write against another revision is a 409 conflict; without it, a write
 * racing another is retried on the newer state.
 */
export async function updateOrchestration(
  ctx: Ctx,
  input: { orchestrationId: string; body: OrchestrationUpdateBody },
): Promise<OrchestrationRecord> {
  const { body } = input;
  await reachableOrchestration(ctx.store.db, ctx.actor, input.orchestrationId);
  for (let attempt = 0; ; attempt++) {
    const written = await ctx.store.transaction(async (trx) => {
      const current = (await findOrchestration(trx, input.orchestrationId))!;
      if (body.base_revision !== undefined && body.base_revision !== current.revision)
        throw conflict(current);
      const graph = (await listOrchestrationGraphs(trx, [current.id])).get(current.id)!;
      const next = {
        name: body.name ?? current.name,
        members: body.members?.map((m) => ({ agent_id: m.agent_id, role: m.role ?? null })) ?? graph.members,
        edges: body.edges ?? graph.edges,
      };
      await checkGraph(trx, current.team_id, next.members, next.edges);
      const row: OrchestrationRow = {
        ...current,
        name: next.name,
        revision: orchestrationRevision(next),
        updated_at: timestamp(new Date(ctx.clock.now())),
      };
      const moved = !(await updateOrchestrationIf(trx, current.id, current.revision, row));
      if (moved) return { moved: true as const, current };
      if (body.members) await replaceOrchestrationMembers(trx, current.id, next.members);
      if (body.members || body.edges) await replaceOrchestrationEdges(trx, current.id, next.edges);
      return { moved: false as const, record: record(row, next) };
    });
    if (!written.moved) return written.record;
    if (body.base_revision !== undefined || attempt >= 4) throw conflict(written.current);
  }
}

/**
 * Every member must already have access to the orchestration's team, and every edge must join two
 * different members: else 400 (spec control plane rule 9).
 */
async function checkGraph(
  db: Db,
  teamId: string,
  members: readonly OrchestrationMember[],
  edges: readonly OrchestrationEdge[],
): Promise<void> {
  for (const member of members) {
    if (!(await agentHasTeamAccess(db, member.agent_id, teamId)))
      throw new PaddockError(
        'orchestration_member_denied',
        `agent ${member.agent_id} does not have access to team ${teamId}`,
        { extra: { agent_id: member.agent_id } },
      );
  }
  const ids = new Set(members.map((m) => m.agent_id));
  for (const edge of edges) {
    if (!ids.has(edge.from) || !ids.has(edge.to) || edge.from === edge.to)
      throw new PaddockError(
        'invalid_orchestration_edge',
        edge.from === edge.to
          ? `edge ${edge.from} -> ${edge.to} joins an agent to itself`
          : `edge ${edge.from} -> ${edge.to} does not connect two members`,
        { extra: { edge } },
      );
  }
}

/** A team the caller belongs to, in an organization they belong to; else 404 `Team not found`. */
async function reachableTeam(db: Db, actor: Actor, teamId: string, orgId?: string): Promise<void> {
  const teamOrgId = actor.teamIds.has(teamId) ? await findTeamOrgId(db, teamId) : undefined;
  if (!teamOrgId || (orgId !== undefined && teamOrgId !== orgId)) throw teamNotFound();
  if (!(await isOrgMember(db, teamOrgId, actor.userId))) throw teamNotFound();
}

async function reachableOrchestration(db: Db, actor: Actor, id: string): Promise<OrchestrationRow> {
  const row = await findOrchestration(db, id);
  if (!row || !actor.teamIds.has(row.team_id)) throw orchestrationNotFound();
  return row;
}

function record(
  row: OrchestrationRow,
  graph: { members: readonly OrchestrationMember[]; edges: readonly OrchestrationEdge[] },
): OrchestrationRecord {
  return {
    id: row.id,
    team_id: row.team_id,
    name: row.name,
    revision: row.revision,
    members: graph.members.map((m) => ({ agent_id: m.agent_id, role: m.role })),
    edges: graph.edges.map((e) => ({ from: e.from, to: e.to })),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

const conflict = (current: OrchestrationRow) =>
  new PaddockError(
    'conflict',
    'base_revision conflict: the orchestration changed since it was read; pull, then push',
    {
      extra: { current_revision: current.revision },
    },
  );
const teamNotFound = () => new PaddockError('team_not_found', 'Team not found');
const orchestrationNotFound = () => new PaddockError('orchestration_not_found', 'Orchestration not found');
