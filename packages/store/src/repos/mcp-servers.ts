import { type Selectable, sql } from 'kysely';
import type { McpOauthFlowsTable, McpOauthTokensTable, McpServerProbesTable } from '../schema.ts';
import type { Db } from '../store.ts';

export type McpServerProbeRow = Selectable<McpServerProbesTable>;
export type McpOauthTokenRow = Selectable<McpOauthTokensTable>;
export type McpOauthFlowRow = Selectable<McpOauthFlowsTable>;

export async function insertMcpOauthFlow(db: Db, row: McpOauthFlowRow): Promise<void> {
  await db.insertInto('mcp_oauth_flows').values(row).execute();
}

/** Takes a flow by its state: it is removed, so a callback is answered once. */
export function takeMcpOauthFlow(db: Db, state: string): Promise<McpOauthFlowRow | undefined> {
  return db.deleteFrom('mcp_oauth_flows').where('state', '=', state).returningAll().executeTakeFirst();
}

/** Drops flows begun before `before` (never finished). */
export async function purgeMcpOauthFlows(db: Db, before: string): Promise<void> {
  await db.deleteFrom('mcp_oauth_flows').where('created_at', '<', before).execute();
}

export function listMcpServerProbes(db: Db, agentId: string): Promise<McpServerProbeRow[]> {
  return db.selectFrom('mcp_server_probes').selectAll().where('agent_id', '=', agentId).execute();
}

/** Records a probe, replacing the previous one of the same agent and server. */
export async function upsertMcpServerProbe(db: Db, row: McpServerProbeRow): Promise<void> {
  const { agent_id, server_name, ...rest } = row;
  await db
    .insertInto('mcp_server_probes')
    .values(row)
    .onConflict((oc) => oc.columns(['agent_id', 'server_name']).doUpdateSet(rest))
    .execute();
}

export function listMcpOauthTokens(db: Db, agentId: string): Promise<McpOauthTokenRow[]> {
  return db.selectFrom('mcp_oauth_tokens').selectAll().where('agent_id', '=', agentId).execute();
}

/** Stores an agent's OAuth token for a server (sealed by the caller), replacing an earlier one. */
export async function upsertMcpOauthToken(db: Db, row: McpOauthTokenRow): Promise<void> {
  const { agent_id, server_name, created_at: _created, ...rest } = row;
  await db
    .insertInto('mcp_oauth_tokens')
    .values(row)
    .onConflict((oc) => oc.columns(['agent_id', 'server_name']).doUpdateSet(rest))
    .execute();
}

/**
 * The newest `mcp.status` events of an agent's threads (what its sandboxes reported about the
 * servers they run), newest first.
 */
export function listAgentMcpStatusEvents(
  db: Db,
  agentId: string,
  limit: number,
): Promise<{ data: string; ts: string }[]> {
  return (
    db
      .selectFrom('events')
      .innerJoin('threads', 'threads.id', 'events.thread_id')
      .select(['events.data', 'events.ts'])
      .where('threads.agent_id', '=', agentId)
      // A literal, not a parameter, so both databases use the partial index made for it.
      .where('events.type', '=', sql.lit('mcp.status'))
      .orderBy('events.ts', 'desc')
      .limit(limit)
      .execute()
  );
}
