import type { Insertable, Selectable } from 'kysely';
import type { AgentComponentsTable } from '../schema.ts';
import type { Db } from '../store.ts';

export type AgentComponentRow = Selectable<AgentComponentsTable>;
/** The kinds kept in `agent_components`. */
export type StoredComponentKind = 'playbook' | 'eval';

/** The agent's components of these kinds, by name; archived ones only when asked. */
export function listAgentComponents(
  db: Db,
  agentId: string,
  kinds: readonly StoredComponentKind[],
  options: { includeArchived?: boolean } = {},
): Promise<AgentComponentRow[]> {
  let query = db
    .selectFrom('agent_components')
    .selectAll()
    .where('agent_id', '=', agentId)
    .where('kind', 'in', kinds);
  if (!options.includeArchived) query = query.where('status', '=', 'active');
  return query.orderBy('kind').orderBy('name').execute();
}

/** Creates the component, or rewrites the one of that agent, kind and name (archived or not). */
export async function upsertAgentComponent(db: Db, row: Insertable<AgentComponentsTable>): Promise<void> {
  await db
    .insertInto('agent_components')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['agent_id', 'kind', 'name']).doUpdateSet({
        files: row.files,
        hash: row.hash,
        status: row.status,
        updated_at: row.updated_at,
        archived_at: row.archived_at ?? null,
      }),
    )
    .execute();
}

/** Archives the agent's active components of this kind whose names are not kept. */
export async function archiveAgentComponentsExcept(
  db: Db,
  agentId: string,
  kind: StoredComponentKind,
  keep: readonly string[],
  at: string,
): Promise<void> {
  let query = db
    .updateTable('agent_components')
    .set({ status: 'archived', archived_at: at, updated_at: at })
    .where('agent_id', '=', agentId)
    .where('kind', '=', kind)
    .where('status', '=', 'active');
  if (keep.length > 0) query = query.where('name', 'not in', keep);
  await query.execute();
}
