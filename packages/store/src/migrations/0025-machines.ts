import type { Kysely } from 'kysely';

/**
 * Where each thread's workspace and sandbox live, and which node reaches that machine now (issue
 * 18): `threads.machine_id` is the machine (a node's own runner: the node's id; a detached runner:
 * its id), `machines` the node each machine is reachable through, renewed by that node while it
 * lives. A thread's turns and its requests that touch the workspace go to that node.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('threads').addColumn('machine_id', 'text').execute();
  await db.schema
    .createTable('machines')
    .addColumn('machine_id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('node_id', 'text', (c) => c.notNull())
    .addColumn('node_url', 'text', (c) => c.notNull())
    .addColumn('seen_until', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('machines_node').on('machines').column('node_id').execute();
}
