import { type SkillPublishBody, type SkillVersionRecord, timestamp } from '@paddock/protocol';
import { type Db, findSkillVersion, insertSkillVersion, listSkillVersions } from '@paddock/store';
import type { Actor, Ctx } from '../context.ts';
import { PaddockError } from '../errors.ts';
import { publishingOrgId } from './skill-access.ts';
import { skillContent, skillVersionRecord } from './skill-files.ts';

export interface SkillVersionKey {
  creator: string;
  slug: string;
  version: string;
}

/**
 * `PUT /v2/skills/{creator}/{slug}/versions/{version}`: publishes an immutable version. The same
 * content again (files and `public`) is no change (`created: false`); other content for a version
 * that exists is 409 `skill_version_conflict`.
 */
export async function publishSkill(
  ctx: Ctx,
  input: SkillVersionKey & { body: SkillPublishBody },
): Promise<{ record: SkillVersionRecord; created: boolean }> {
  const content = skillContent(input.body.files);
  return ctx.store.transaction((trx) =>
    storeSkillVersion(ctx, trx, ctx.actor, input, content, input.body.public),
  );
}

/** Stores a version inside the caller's transaction (a publish, or a manifest's skill component). */
export async function storeSkillVersion(
  ctx: Pick<Ctx, 'clock'>,
  trx: Db,
  actor: Actor,
  key: SkillVersionKey,
  content: ReturnType<typeof skillContent>,
  isPublic = false,
): Promise<{ record: SkillVersionRecord; created: boolean }> {
  const orgId = await publishingOrgId(
    trx,
    actor,
    key.creator,
    await listSkillVersions(trx, key.creator, key.slug),
  );
  const row = {
    creator: key.creator,
    slug: key.slug,
    version: key.version,
    org_id: orgId,
    name: content.name,
    description: content.description,
    public: isPublic ? 1 : 0,
    hash: content.hash,
    files: JSON.stringify(content.files),
    published_by: actor.userId,
    created_at: timestamp(new Date(ctx.clock.now())),
  };
  const created = await insertSkillVersion(trx, row);
  const stored = created ? row : await findSkillVersion(trx, key.creator, key.slug, key.version);
  if (!stored) throw new Error('a skill version that was there is gone');
  if (!created && (stored.hash !== row.hash || stored.public !== row.public))
    throw new PaddockError(
      'skill_version_conflict',
      `${key.creator}/${key.slug}@${key.version} is published with other content: versions are immutable, publish a new one`,
    );
  return { record: skillVersionRecord(stored), created };
}
