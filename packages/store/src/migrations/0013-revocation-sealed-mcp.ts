import { type Kysely, sql } from 'kysely';

/** Seals one secret value with the deployment's secret key (core's SecretBox). */
export type SealSecret = (plaintext: string) => string;

/**
 * Issue 10 §4 and §5. Login sessions get server-side state that logout revokes and every request
 * checks; a thread token records which host holds its sandbox (`holder`), so a restarted server can
 * revoke the tokens of the sandboxes that died with it; a user's team memberships are indexed by
 * user (read on every request). MCP server `headers` and `env` values were
 * stored in plain text inside `agents.mcp_servers`: each becomes `{"sealed": "<SecretBox seal>"}`.
 */
export function migration(seal: SealSecret | undefined) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('login_sessions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('revoked_at', 'text')
        .execute();
      await db.schema
        .createIndex('login_sessions_expires')
        .on('login_sessions')
        .column('expires_at')
        .execute();
      // Every request now reads the caller's teams (no credential cache): by user, not by team.
      await db.schema.createIndex('team_members_user').on('team_members').column('user_id').execute();
      await db.schema.alterTable('tokens').addColumn('holder', 'text').execute();
      await db.schema
        .createIndex('tokens_thread_holder')
        .on('tokens')
        .columns(['holder'])
        .where(sql.ref('revoked_at'), 'is', null)
        .execute();
      await sealMcpServerSecrets(db, seal);
    },
  };
}

async function sealMcpServerSecrets(db: Kysely<unknown>, seal: SealSecret | undefined): Promise<void> {
  const rows = await sql<{ id: string; mcp_servers: string }>`select id, mcp_servers from agents`.execute(db);
  for (const row of rows.rows) {
    const servers = JSON.parse(row.mcp_servers) as Record<string, unknown>[];
    let changed = false;
    for (const server of servers) {
      for (const field of ['headers', 'env']) {
        const values = server[field] as Record<string, unknown> | undefined;
        if (!values) continue;
        for (const [name, value] of Object.entries(values)) {
          if (typeof value !== 'string') continue;
          if (!seal)
            throw new Error(
              'agents hold MCP server secrets in plain text; sealing them needs the secret key',
            );
          values[name] = { sealed: seal(value) };
          changed = true;
        }
      }
    }
    if (changed)
      await sql`update agents set mcp_servers = ${JSON.stringify(servers)} where id = ${row.id}`.execute(db);
  }
}
