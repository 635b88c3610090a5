import type { Selectable } from 'kysely';
import type { SkillVersionsTable } from '../schema.ts';
import type { Db } from '../store.ts';

export type SkillVersionRow = Selectable<SkillVersionsTable>;
/** A version without its files: what listings and resolution read. */
export type SkillVersionHead = Omit<SkillVersionRow, 'files'>;

const headColumns = [
  'creator',
  'slug',
  'version',
  'org_id',
  'name',
  'description',
  'public',
  'hash',
  'published_by',
  'created_at',
] as const;

export function findSkillVersion(
  db: Db,
  creator: string,
  slug: string,
  version: string,
): Promise<SkillVersionRow | undefined> {
  return db
    .selectFrom('skill_versions')
    .selectAll()
    .where('creator', '=', creator)
    .where('slug', '=', slug)
    .where('version', '=', version)
    .executeTakeFirst();
}

/** Every version of `<creator>/<slug>`, files left out, in no particular order. */
export function listSkillVersions(db: Db, creator: string, slug: string): Promise<SkillVersionHead[]> {
  return db
    .selectFrom('skill_versions')
    .select(headColumns)
    .where('creator', '=', creator)
    .where('slug', '=', slug)
    .execute();
}

/** Every version of every skill of a creator, files left out, ordered by slug. */
export function listCreatorSkillVersions(db: Db, creator: string): Promise<SkillVersionHead[]> {
  return db
    .selectFrom('skill_versions')
    .select(headColumns)
    .where('creator', '=', creator)
    .orderBy('slug')
    .execute();
}

/** Inserts a version unless one of that creator, slug and version exists; answers whether it did. */
export async function insertSkillVersion(db: Db, row: SkillVersionRow): Promise<boolean> {
  const result = await db
    .insertInto('skill_versions')
    .values(row)
    .onConflict((c) => c.columns(['creator', 'slug', 'version']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
}
