import { latestSkillVersion, parseSkillSource, type ResolvedSkill } from '@paddock/protocol';
import { type Db, listSkillVersions } from '@paddock/store';
import { PaddockError } from '../errors.ts';

/**
 * The version each `registry:` source takes for an agent of organization `orgId`: the pinned one,
 * else the newest (`latestSkillVersion`) of the versions that organization may use (its own, and
 * public ones). A source that does not resolve is 422 `unknown_skill` naming it.
 */
export async function resolveSkills(
  db: Db,
  orgId: string,
  skills: readonly { source: string }[],
): Promise<ResolvedSkill[]> {
  const resolved: ResolvedSkill[] = [];
  const slugs = new Set<string>();
  for (const [index, { source }] of skills.entries()) {
    const parsed = parseSkillSource(source);
    const usable = parsed
      ? (await listSkillVersions(db, parsed.creator, parsed.slug)).filter(
          (v) => v.public === 1 || v.org_id === orgId,
        )
      : [];
    const version = parsed?.version
      ? usable.find((v) => v.version === parsed.version)?.version
      : latestSkillVersion(usable.map((v) => v.version));
    if (!parsed || !version)
      throw new PaddockError(
        'unknown_skill',
        `unknown skill ${source}: no such ${parsed?.version ? 'version' : 'skill'} in the registry that this agent's organization can use`,
        { extra: { source, loc: ['skills', index, 'source'] } },
      );
    // Each is shown at $PADDOCK_SKILLS_DIR/<slug>: two of one slug would be one folder.
    if (slugs.has(parsed.slug))
      throw new PaddockError('unknown_skill', `two skills named ${parsed.slug}: ${source} and another`, {
        extra: { source, loc: ['skills', index, 'source'] },
      });
    slugs.add(parsed.slug);
    resolved.push({ source, creator: parsed.creator, slug: parsed.slug, version });
  }
  return resolved;
}
