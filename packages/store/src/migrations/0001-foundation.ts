import { type Kysely, sql } from 'kysely';

/** Portable DDL: text ids and timestamps, integer counters, JSON as text; runs on SQLite and PostgreSQL. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('username', 'text', (c) => c.notNull().unique())
    .addColumn('password_hash', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('orgs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('org_members')
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('org_members_pk', ['org_id', 'user_id'])
    .execute();
  await db.schema
    .createTable('teams')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('team_members')
    .addColumn('team_id', 'text', (c) => c.notNull().references('teams.id'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('team_members_pk', ['team_id', 'user_id'])
    .execute();
  await db.schema
    .createTable('tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('agent_id', 'text')
    .addColumn('thread_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text')
    .addColumn('revoked_at', 'text')
    .execute();
  await db.schema
    .createTable('agents')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('team_id', 'text', (c) => c.notNull().references('teams.id'))
    .addColumn('owner_user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('spec_hash', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('harness', 'text', (c) => c.notNull())
    .addColumn('machine_kind', 'text', (c) => c.notNull())
    .addColumn('machine_size', 'text', (c) => c.notNull())
    .addColumn('model', 'text')
    .addColumn('instructions', 'text')
    .addColumn('entrypoint', 'text')
    .addColumn('mcp_servers', 'text', (c) => c.notNull())
    .addColumn('skills', 'text', (c) => c.notNull())
    .addColumn('secrets_enc', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('agents_team_spec_unique', ['team_id', 'spec_hash'])
    .execute();
  await db.schema
    .createTable('threads')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id'))
    .addColumn('team_id', 'text', (c) => c.notNull().references('teams.id'))
    .addColumn('owner_user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('metadata', 'text', (c) => c.notNull())
    .addColumn('group_id', 'text')
    .addColumn('generation', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_seq', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_position', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_input_sequence', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('threads_owner_idx')
    .on('threads')
    .columns(['owner_user_id', 'created_at'])
    .execute();
  await db.schema
    .createTable('messages')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('thread_id', 'text', (c) => c.notNull().references('threads.id'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('parts', 'text')
    .addColumn('metadata', 'text', (c) => c.notNull())
    .addColumn('turn_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('messages_thread_position_unique', ['thread_id', 'position'])
    .execute();
  await db.schema
    .createTable('inputs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('thread_id', 'text', (c) => c.notNull().references('threads.id'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('turn_id', 'text')
    .addColumn('generation', 'integer', (c) => c.notNull())
    .addColumn('sequence', 'integer', (c) => c.notNull())
    .addColumn('messages', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('inputs_thread_idx')
    .on('inputs')
    .columns(['thread_id', 'status', 'sequence'])
    .execute();
  await db.schema
    .createTable('turns')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('thread_id', 'text', (c) => c.notNull().references('threads.id'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('generation', 'integer', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at', 'text')
    .addColumn('cancel_requested', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('stop_reason', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text')
    .addColumn('ended_at', 'text')
    .execute();
  await db.schema.createIndex('turns_status_idx').on('turns').columns(['status', 'created_at']).execute();
  // A thread has at most one running and at most one queued turn: the store itself refuses a second.
  await db.schema
    .createIndex('turns_one_running')
    .on('turns')
    .column('thread_id')
    .unique()
    .where(sql.ref('status'), '=', 'running')
    .execute();
  await db.schema
    .createIndex('turns_one_queued')
    .on('turns')
    .column('thread_id')
    .unique()
    .where(sql.ref('status'), '=', 'queued')
    .execute();
  await db.schema
    .createTable('events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('thread_id', 'text', (c) => c.notNull().references('threads.id'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('turn_id', 'text')
    .addColumn('tool_id', 'text')
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('ts', 'text', (c) => c.notNull())
    .addUniqueConstraint('events_thread_seq_unique', ['thread_id', 'seq'])
    .execute();
}
