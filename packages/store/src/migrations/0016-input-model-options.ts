import type { Kysely } from 'kysely';

/**
 * A task input's `model_options`, as the client gave them (JSON), for the turn that takes the input
 * and for the comparison of a retry with the same `input_id`; null when the input had none.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('inputs').addColumn('model_options', 'text').execute();
}
