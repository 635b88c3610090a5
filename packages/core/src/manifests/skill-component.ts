import {
  type ManifestWarning,
  type PublishedComponent,
  parseSkillSource,
  skillFrontMatter,
  skillNameSchema,
  skillVersionSchema,
} from '@paddock/protocol';
import type { Db } from '@paddock/store';
import type { NormalizedSpec } from '../agents/normalize-spec.ts';
import type { Ctx } from '../context.ts';
import { PaddockError } from '../errors.ts';
import { storeSkillVersion } from '../skills/publish-skill.ts';
import { skillContent } from '../skills/skill-files.ts';
import { skillFile } from './spec-components.ts';

type Skill = NormalizedSpec['skills'][number];

/** Whether a skill component carries the skill itself (a folder with a SKILL.md), not a registry reference. */
export function carriesSkillFiles(c: PublishedComponent): boolean {
  return c.files.some((f) => f.path === 'SKILL.md');
}

/**
 * A skill component with its files (D14): publishes them as a version of `<creator>/<slug>` (the
 * component's name) and answers the pinned source the agent then uses. The version is the one
 * `skill.json`'s source pins, else the SKILL.md front matter's `version`. The same content again
 * is no change; what cannot be published (no version, other content for a published version, a
 * creator the caller is not a member of, invalid files) is a warning, and the agent keeps what it had.
 */
export async function publishSkillComponent(
  ctx: Ctx,
  trx: Db,
  c: PublishedComponent,
): Promise<{ value: Skill } | { warning: ManifestWarning }> {
  const warn = (code: string, message: string) => ({
    warning: { type: c.type, name: c.name, code, message },
  });
  const [creator, slug, ...rest] = c.name.split('/');
  if (
    rest.length > 0 ||
    !skillNameSchema.safeParse(creator).success ||
    !skillNameSchema.safeParse(slug).success
  )
    return warn('invalid_skill', 'a skill component is named <creator>/<slug>');
  const files = c.files.filter((f) => f.path !== skillFile);
  const version = pinnedVersion(c) ?? versionOf(files.find((f) => f.path === 'SKILL.md')?.content ?? '');
  if (!version || !skillVersionSchema.safeParse(version).success)
    return warn(
      'skill_version_missing',
      `a skill published from its files needs a semantic version: in ${skillFile} ({"source": "registry:${c.name}@<version>"}) or as "version" in SKILL.md's front matter`,
    );
  try {
    const content = skillContent(files);
    await storeSkillVersion(ctx, trx, ctx.actor, { creator, slug, version }, content);
  } catch (error) {
    if (error instanceof PaddockError) return warn(error.code, error.message);
    throw error;
  }
  return { value: { source: `registry:${creator}/${slug}@${version}` } };
}

function pinnedVersion(c: PublishedComponent): string | undefined {
  const text = c.files.find((f) => f.path === skillFile)?.content;
  if (text === undefined) return undefined;
  try {
    const source = (JSON.parse(text) as { source?: unknown }).source;
    return typeof source === 'string' ? parseSkillSource(source)?.version : undefined;
  } catch {
    return undefined;
  }
}

/** SKILL.md's front matter `version` (a YAML number like 1.0 is not a semantic version). */
function versionOf(skillMd: string): string | undefined {
  if (!skillFrontMatter(skillMd)) return undefined;
  const front = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---/.exec(skillMd)?.[1] ?? '';
  return /^version:\s*["']?([^\s"']+)["']?\s*$/m.exec(front)?.[1];
}
