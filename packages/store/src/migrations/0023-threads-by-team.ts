import type { Kysely } from 'kysely';

/** `GET /v2/threads` lists a team's threads newest first. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('threads_by_team_idx')
    .on('threads')
    .columns(['team_id', 'created_at'])
    .execute();
}
