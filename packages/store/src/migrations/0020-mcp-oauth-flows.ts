import type { Kysely } from 'kysely';

/**
 * MCP OAuth (issue 13 §3): the authorization flows under way, by their `state`, and with each token
 * the client it was issued to (what a refresh needs), both sealed with the deployment's key.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('mcp_oauth_tokens').addColumn('client_sealed', 'text').execute();
  await db.schema
    .createTable('mcp_oauth_flows')
    .addColumn('state', 'text', (c) => c.primaryKey())
    .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id'))
    .addColumn('server_name', 'text', (c) => c.notNull())
    .addColumn('flow_sealed', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
}
