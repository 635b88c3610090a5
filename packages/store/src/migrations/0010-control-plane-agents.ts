import { type Kysely, type QueryExecutorProvider, sql } from 'kysely';

/**
 * Control-plane agents (D13): the agent record's profile fields beside its spec, the grants that
 * make an agent visible to a team (its own team from creation, others later), and the chat and
 * meeting installs with their credentials sealed.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('agents').addColumn('tagline', 'text').execute();
  await db.schema
    .alterTable('agents')
    .addColumn('memory_enabled', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('agents')
    .addColumn('browser_enabled', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  await db.schema
    .createTable('team_agent_grants')
    .addColumn('team_id', 'text', (c) => c.notNull().references('teams.id'))
    .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id'))
    .addColumn('granted_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('team_agent_grants_pk', ['team_id', 'agent_id'])
    .execute();
  // Team agent listing reads a team's grants newest first.
  await db.schema
    .createIndex('team_agent_grants_team_granted')
    .on('team_agent_grants')
    .columns(['team_id', 'granted_at'])
    .execute();
  await backfillOwnTeamGrants(db);

  await db.schema
    .createTable('agent_integrations')
    .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('config_sealed', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('agent_integrations_pk', ['agent_id', 'kind'])
    .execute();
}

/** Every agent is granted to its own team, as of its creation (agents made before grants existed). */
export async function backfillOwnTeamGrants(db: QueryExecutorProvider): Promise<void> {
  await sql`
    insert into team_agent_grants (team_id, agent_id, granted_at)
    select a.team_id, a.id, a.created_at from agents a
    where not exists (
      select 1 from team_agent_grants g where g.team_id = a.team_id and g.agent_id = a.id
    )`.execute(db);
}
