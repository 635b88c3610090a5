import type { Selectable } from 'kysely';
import type { OrchestrationsTable } from '../schema.ts';
import type { Db } from '../store.ts';

export type OrchestrationRow = Selectable<OrchestrationsTable>;
export interface OrchestrationMember {
  agent_id: string;
  role: string | null;
}
export interface OrchestrationEdge {
  from: string;
  to: string;
}

export function findOrchestration(db: Db, id: string): Promise<OrchestrationRow | undefined> {
  return db.selectFrom('orchestrations').selectAll().where('id', '=', id).executeTakeFirst();
}

/** A team's orchestrations, newest first. */
export function listTeamOrchestrations(db: Db, teamId: string): Promise<OrchestrationRow[]> {
  return db
    .selectFrom('orchestrations')
    .selectAll()
    .where('team_id', '=', teamId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

export async function insertOrchestration(db: Db, row: OrchestrationRow): Promise<void> {
  await db.insertInto('orchestrations').values(row).execute();
}

/**
 * Moves an orchestration to a new revision only while it still has `expectedRevision`; false when
 * another write got there first (the caller answers the base_revision conflict).
 */
export async function updateOrchestrationIf(
  db: Db,
  id: string,
  expectedRevision: string,
  patch: Pick<OrchestrationRow, 'name' | 'revision' | 'updated_at'>,
): Promise<boolean> {
  const result = await db
    .updateTable('orchestrations')
    .set(patch)
    .where('id', '=', id)
    .where('revision', '=', expectedRevision)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Members and edges of several orchestrations at once, in declared order. */
export async function listOrchestrationGraphs(
  db: Db,
  ids: readonly string[],
): Promise<Map<string, { members: OrchestrationMember[]; edges: OrchestrationEdge[] }>> {
  const graphs = new Map(
    ids.map((id) => [id, { members: [] as OrchestrationMember[], edges: [] as OrchestrationEdge[] }]),
  );
  if (ids.length === 0) return graphs;
  const [members, edges] = await Promise.all([
    db
      .selectFrom('orchestration_members')
      .select(['orchestration_id', 'agent_id', 'role'])
      .where('orchestration_id', 'in', ids)
      .orderBy('orchestration_id')
      .orderBy('position')
      .execute(),
    db
      .selectFrom('orchestration_edges')
      .select(['orchestration_id', 'from_agent_id', 'to_agent_id'])
      .where('orchestration_id', 'in', ids)
      .orderBy('orchestration_id')
      .orderBy('position')
      .execute(),
  ]);
  for (const m of members)
    graphs.get(m.orchestration_id)!.members.push({ agent_id: m.agent_id, role: m.role });
  for (const e of edges)
    graphs.get(e.orchestration_id)!.edges.push({ from: e.from_agent_id, to: e.to_agent_id });
  return graphs;
}

/** Whole-replace of an orchestration's members (edges go with them: they refer to members). */
export async function replaceOrchestrationMembers(
  db: Db,
  id: string,
  members: readonly OrchestrationMember[],
): Promise<void> {
  await db.deleteFrom('orchestration_members').where('orchestration_id', '=', id).execute();
  if (members.length === 0) return;
  await db
    .insertInto('orchestration_members')
    .values(
      members.map((m, position) => ({ orchestration_id: id, agent_id: m.agent_id, role: m.role, position })),
    )
    .execute();
}

export async function replaceOrchestrationEdges(
  db: Db,
  id: string,
  edges: readonly OrchestrationEdge[],
): Promise<void> {
  await db.deleteFrom('orchestration_edges').where('orchestration_id', '=', id).execute();
  if (edges.length === 0) return;
  await db
    .insertInto('orchestration_edges')
    .values(
      edges.map((e, position) => ({
        orchestration_id: id,
        from_agent_id: e.from,
        to_agent_id: e.to,
        position,
      })),
    )
    .execute();
}

/**
 * Whether some orchestration has an edge between the two agents, in either direction: one lookup
 * on each end's index.
 */
export async function haveOrchestrationEdge(db: Db, a: string, b: string): Promise<boolean> {
  const row = await db
    .selectFrom('orchestration_edges')
    .select('orchestration_id')
    .where((eb) =>
      eb.or([
        eb.and([eb('from_agent_id', '=', a), eb('to_agent_id', '=', b)]),
        eb.and([eb('from_agent_id', '=', b), eb('to_agent_id', '=', a)]),
      ]),
    )
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** Whether the user belongs to the organization (orchestrations check it on top of the team). */
export async function isOrgMember(db: Db, orgId: string, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom('org_members')
    .select('user_id')
    .where('org_id', '=', orgId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row !== undefined;
}
