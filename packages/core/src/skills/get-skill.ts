import {
  compareSemver,
  latestSkillVersion,
  type SkillRecord,
  type SkillVersionRecord,
} from '@paddock/protocol';
import {
  findSkillVersion,
  listCreatorSkillVersions,
  listSkillVersions,
  type SkillVersionHead,
} from '@paddock/store';
import type { Ctx } from '../context.ts';
import { PaddockError } from '../errors.ts';
import { canReadSkill, readerOrgIds } from './skill-access.ts';
import { skillVersionRecord } from './skill-files.ts';

/** `GET /v2/skills/{creator}/{slug}`: the versions the caller may read; 404 when none. */
export async function getSkill(
  ctx: Ctx,
  { creator, slug }: { creator: string; slug: string },
): Promise<SkillRecord> {
  const orgIds = await readerOrgIds(ctx.store.db, ctx.actor);
  const readable = (await listSkillVersions(ctx.store.db, creator, slug)).filter((v) =>
    canReadSkill(orgIds, v),
  );
  if (readable.length === 0) throw skillNotFound();
  return skillRecord(creator, slug, readable);
}

/** `GET /v2/skills/{creator}`: the creator's skills the caller may read, by slug. */
export async function listSkills(
  ctx: Ctx,
  { creator }: { creator: string },
): Promise<{ items: SkillRecord[] }> {
  const orgIds = await readerOrgIds(ctx.store.db, ctx.actor);
  const bySlug = new Map<string, SkillVersionHead[]>();
  for (const v of await listCreatorSkillVersions(ctx.store.db, creator)) {
    if (!canReadSkill(orgIds, v)) continue;
    bySlug.set(v.slug, [...(bySlug.get(v.slug) ?? []), v]);
  }
  return { items: [...bySlug].map(([slug, versions]) => skillRecord(creator, slug, versions)) };
}

/** `GET /v2/skills/{creator}/{slug}/versions/{version}`: its files; 404 when out of reach. */
export async function getSkillVersion(
  ctx: Ctx,
  { creator, slug, version }: { creator: string; slug: string; version: string },
): Promise<SkillVersionRecord> {
  const row = await findSkillVersion(ctx.store.db, creator, slug, version);
  if (!row || !canReadSkill(await readerOrgIds(ctx.store.db, ctx.actor), row)) throw skillNotFound();
  return skillVersionRecord(row);
}

function skillRecord(creator: string, slug: string, versions: readonly SkillVersionHead[]): SkillRecord {
  const names = versions.map((v) => v.version).sort(compareSemver);
  return { creator, slug, versions: names, latest: latestSkillVersion(names) };
}

export const skillNotFound = () => new PaddockError('skill_not_found', 'Skill not found');
