import type { Selectable } from 'kysely';
import type { AgentIntegrationsTable } from '../schema.ts';
import type { Db } from '../store.ts';

export type AgentIntegrationRow = Selectable<AgentIntegrationsTable>;

export function listAgentIntegrations(db: Db, agentIds: readonly string[]): Promise<AgentIntegrationRow[]> {
  if (agentIds.length === 0) return Promise.resolve([]);
  return db.selectFrom('agent_integrations').selectAll().where('agent_id', 'in', agentIds).execute();
}

/** Installs or rotates an integration in place: one row per agent and kind. */
export async function upsertAgentIntegration(
  db: Db,
  row: { agent_id: string; kind: string; config_sealed: string; at: string },
): Promise<void> {
  await db
    .insertInto('agent_integrations')
    .values({
      agent_id: row.agent_id,
      kind: row.kind,
      config_sealed: row.config_sealed,
      created_at: row.at,
      updated_at: row.at,
    })
    .onConflict((oc) =>
      oc.columns(['agent_id', 'kind']).doUpdateSet({ config_sealed: row.config_sealed, updated_at: row.at }),
    )
    .execute();
}

/** Removes an install; answers whether there was one. */
export async function deleteAgentIntegration(db: Db, agentId: string, kind: string): Promise<boolean> {
  const result = await db
    .deleteFrom('agent_integrations')
    .where('agent_id', '=', agentId)
    .where('kind', '=', kind)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
