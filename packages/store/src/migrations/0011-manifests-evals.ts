import type { Kysely } from 'kysely';

/**
 * Manifests and evals (issue 5, parts 4 and 9). An agent's instructions, skills and MCP servers stay
 * in its `agents` columns (the runtime's source); its playbooks and evals are components of their
 * own here: a name unique per agent and kind, the files as JSON, `active` or `archived`. An eval run
 * is one judge's verdict on one task against one eval, with that eval's name and hash at the time.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('agent_components')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('files', 'text', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('archived_at', 'text')
    .execute();
  await db.schema
    .createIndex('agent_components_name_idx')
    .on('agent_components')
    .columns(['agent_id', 'kind', 'name'])
    .unique()
    .execute();

  await db.schema
    .createTable('eval_runs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id'))
    .addColumn('eval_id', 'text', (c) => c.notNull().references('agent_components.id'))
    .addColumn('eval_name', 'text', (c) => c.notNull())
    .addColumn('eval_hash', 'text', (c) => c.notNull())
    .addColumn('task_id', 'text', (c) => c.notNull().references('threads.id'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('passed', 'integer')
    .addColumn('reason', 'text')
    .addColumn('error', 'text')
    .addColumn('judge_model', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('finished_at', 'text')
    .execute();
  await db.schema
    .createIndex('eval_runs_agent_idx')
    .on('eval_runs')
    .columns(['agent_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('eval_runs_task_idx')
    .on('eval_runs')
    .columns(['task_id', 'created_at'])
    .execute();
}
