import type { Kysely } from 'kysely';

/**
 * Turns on detached runners: which runner holds the turn (null: the server's own, in-process runner,
 * whose turns die with it), and the index of the last runner event stored, so a server adopting the
 * turn asks the runner for the rest and stores nothing twice.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('turns').addColumn('runner_id', 'text').execute();
  await db.schema.alterTable('turns').addColumn('event_cursor', 'integer').execute();
}
