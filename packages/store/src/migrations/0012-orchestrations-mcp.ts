import { type Kysely, sql } from 'kysely';

/**
 * Orchestrations (D13): a team's graph of agents, its members and its edges; the reach rule of
 * agent-bound credentials looks edges up from either end, hence one index per end. MCP servers:
 * per agent and server, the last probe from the control plane and the OAuth token (sealed).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('orchestrations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('team_id', 'text', (c) => c.notNull().references('teams.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('revision', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('orchestrations_team_idx')
    .on('orchestrations')
    .columns(['team_id', 'created_at'])
    .execute();
  await db.schema
    .createTable('orchestration_members')
    .addColumn('orchestration_id', 'text', (c) => c.notNull().references('orchestrations.id'))
    .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id'))
    .addColumn('role', 'text')
    .addColumn('position', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('orchestration_members_pk', ['orchestration_id', 'agent_id'])
    .execute();
  await db.schema
    .createTable('orchestration_edges')
    .addColumn('orchestration_id', 'text', (c) => c.notNull().references('orchestrations.id'))
    .addColumn('from_agent_id', 'text', (c) => c.notNull().references('agents.id'))
    .addColumn('to_agent_id', 'text', (c) => c.notNull().references('agents.id'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('orchestration_edges_pk', ['orchestration_id', 'from_agent_id', 'to_agent_id'])
    .execute();
  await db.schema
    .createIndex('orchestration_edges_from_idx')
    .on('orchestration_edges')
    .columns(['from_agent_id', 'to_agent_id'])
    .execute();
  await db.schema
    .createIndex('orchestration_edges_to_idx')
    .on('orchestration_edges')
    .columns(['to_agent_id', 'from_agent_id'])
    .execute();

  await db.schema
    .createTable('mcp_server_probes')
    .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id'))
    .addColumn('server_name', 'text', (c) => c.notNull())
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('transport', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('tool_count', 'integer')
    .addColumn('oauth_required', 'integer', (c) => c.notNull())
    .addColumn('checked_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('mcp_server_probes_pk', ['agent_id', 'server_name'])
    .execute();
  await db.schema
    .createTable('mcp_oauth_tokens')
    .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id'))
    .addColumn('server_name', 'text', (c) => c.notNull())
    .addColumn('access_token_sealed', 'text', (c) => c.notNull())
    .addColumn('refresh_token_sealed', 'text')
    .addColumn('expires_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('mcp_oauth_tokens_pk', ['agent_id', 'server_name'])
    .execute();
  // What an agent's sandboxes reported about their MCP servers: the agent's threads, then their
  // (rare) `mcp.status` events through a partial index that costs other events nothing.
  await db.schema
    .createIndex('threads_by_agent_idx')
    .ifNotExists()
    .on('threads')
    .columns(['agent_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('events_mcp_status_idx')
    .on('events')
    .columns(['thread_id', 'seq'])
    .where(sql.ref('type'), '=', 'mcp.status')
    .execute();
}
