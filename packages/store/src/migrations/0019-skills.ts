import type { Kysely } from 'kysely';

/**
 * The skills registry (D14): each immutable version of `<creator>/<slug>`, owned by the
 * organization that published the first version of that name; and on each thread, the versions its
 * agent's registry skills resolved to when it was created (JSON, `[]` for threads made before).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('skill_versions')
    .addColumn('creator', 'text', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('public', 'integer', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    .addColumn('files', 'text', (c) => c.notNull())
    .addColumn('published_by', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('skill_versions_pk', ['creator', 'slug', 'version'])
    .execute();
  await db.schema
    .alterTable('threads')
    .addColumn('skills', 'text', (c) => c.notNull().defaultTo('[]'))
    .execute();
}
