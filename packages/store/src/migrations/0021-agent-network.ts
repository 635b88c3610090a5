import type { Kysely } from 'kysely';

/**
 * An agent's network policy (issue 15), as JSON: `"none"`, `"full"` or `{"allow": [...]}`; null is
 * the default, `registries`, so agents made before keep it (and their spec hash).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('agents').addColumn('network', 'text').execute();
}
