import { parse as parseYaml } from 'yaml';
import { z } from 'zod';

/**
 * The skills registry (D14). A skill is a folder with a `SKILL.md` (front matter `name`,
 * `description`) and any other files; each version is immutable. Limits of one version: at most
 * `skillLimits.files` files, `skillLimits.totalBytes` bytes in all (decoded), paths of at most
 * `skillLimits.pathChars` characters.
 */
export const skillLimits = { files: 200, totalBytes: 2 * 1024 * 1024, pathChars: 300 } as const;

/** A creator (an organization's name) or a slug: what `registry:<creator>/<slug>` accepts. */
export const skillNameSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[\w.-]+$/, 'letters, digits, "_", "." and "-" only')
  .refine((name) => name !== '.' && name !== '..', 'must not be "." or ".."');

/** Semantic versioning 2.0.0 (semver.org) without build metadata (`+…`, which orders nothing), nor a leading `v`. */
export const semverPattern =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?$/;

export const skillVersionSchema = z
  .string()
  .max(100)
  .regex(semverPattern, 'must be a semantic version (1.2.3)');

/** A relative path inside a skill: no leading `/`, no `\`, no `.`/`..` or empty segments. */
const skillPath = z
  .string()
  .min(1)
  .max(skillLimits.pathChars)
  .refine(
    (p) =>
      !p.includes('\\') &&
      !p.includes('\0') &&
      p.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..'),
    'must be a relative path without empty, "." or ".." segments',
  );

export const skillFileSchema = z.strictObject({
  path: skillPath,
  content: z.string(),
  /** `utf8` (the default) or `base64` for binary files. */
  encoding: z.enum(['utf8', 'base64']).optional(),
});
export type SkillFile = z.infer<typeof skillFileSchema>;

export const skillParamsSchema = z.object({ creator: skillNameSchema, slug: skillNameSchema });
export const skillCreatorParamsSchema = z.object({ creator: skillNameSchema });
export const skillVersionParamsSchema = skillParamsSchema.extend({ version: skillVersionSchema });

/** `PUT /v2/skills/{creator}/{slug}/versions/{version}`. */
export const skillPublishBodySchema = z
  .strictObject({
    files: z.array(skillFileSchema).min(1).max(skillLimits.files),
    /** A public version is readable (and usable in agent specs) by every organization. */
    public: z.boolean().optional(),
  })
  .superRefine((body, issues) => {
    const paths = new Set<string>();
    body.files.forEach((file, index) => {
      if (paths.has(file.path))
        issues.addIssue({
          code: 'custom',
          path: ['files', index, 'path'],
          message: `a second file at ${file.path}`,
        });
      paths.add(file.path);
    });
  });
export type SkillPublishBody = z.infer<typeof skillPublishBodySchema>;

/** One version as answered: its files (text as `utf8`, other bytes as `base64`). */
export const skillVersionRecordSchema = z.object({
  creator: z.string(),
  slug: z.string(),
  version: z.string(),
  name: z.string(),
  description: z.string(),
  public: z.boolean(),
  /** SHA-256 (hex) over the files, sorted by path. */
  hash: z.string(),
  created_at: z.string(),
  files: z.array(z.object({ path: z.string(), content: z.string(), encoding: z.enum(['utf8', 'base64']) })),
});
export type SkillVersionRecord = z.infer<typeof skillVersionRecordSchema>;

/** `GET /v2/skills/{creator}/{slug}`: the versions the caller may read, lowest first. */
export const skillRecordSchema = z.object({
  creator: z.string(),
  slug: z.string(),
  versions: z.array(z.string()),
  /** The highest version without a pre-release tag (else the highest); null when none is readable. */
  latest: z.string().nullable(),
});
export type SkillRecord = z.infer<typeof skillRecordSchema>;

export const skillListSchema = z.object({
  items: z.array(skillRecordSchema),
});

/** The `skills.resolved` event's entries: which version each of the thread's sources got. */
export const resolvedSkillSchema = z.object({
  source: z.string(),
  creator: z.string(),
  slug: z.string(),
  version: z.string(),
});
export type ResolvedSkill = z.infer<typeof resolvedSkillSchema>;

/** `registry:<creator>/<slug>[@<version>]` split, or undefined when it is not one. */
export function parseSkillSource(
  source: string,
): { creator: string; slug: string; version?: string } | undefined {
  const match = /^registry:([\w.-]+)\/([\w.-]+)(?:@([\w.-]+))?$/.exec(source);
  if (!match) return undefined;
  return { creator: match[1], slug: match[2], ...(match[3] ? { version: match[3] } : {}) };
}

/**
 * A `SKILL.md`'s front matter (YAML between `---` lines at the top): its `name` and `description`
 * when both are non-empty strings, else undefined.
 */
export function skillFrontMatter(text: string): { name: string; description: string } | undefined {
  const match = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---(?:\r?\n|$)/.exec(text);
  if (!match) return undefined;
  let data: unknown;
  try {
    data = parseYaml(match[1]);
  } catch {
    return undefined;
  }
  if (data === null || typeof data !== 'object') return undefined;
  const { name, description } = data as Record<string, unknown>;
  if (typeof name !== 'string' || typeof description !== 'string') return undefined;
  if (name.trim() === '' || description.trim() === '') return undefined;
  return { name: name.trim(), description: description.trim() };
}

/** Orders semantic versions (semver.org, section 11). */
export function compareSemver(a: string, b: string): number {
  const pa = semverPattern.exec(a);
  const pb = semverPattern.exec(b);
  if (!pa || !pb) return a < b ? -1 : a > b ? 1 : 0;
  for (let i = 1; i <= 3; i++) {
    const d = Number(pa[i]) - Number(pb[i]);
    if (d !== 0) return Math.sign(d);
  }
  const [ra, rb] = [pa[4], pb[4]];
  if (ra === undefined || rb === undefined) return ra === rb ? 0 : ra === undefined ? 1 : -1;
  const [xa, xb] = [ra.split('.'), rb.split('.')];
  for (let i = 0; i < Math.max(xa.length, xb.length); i++) {
    if (xa[i] === undefined) return -1;
    if (xb[i] === undefined) return 1;
    const [na, nb] = [/^\d+$/.test(xa[i]), /^\d+$/.test(xb[i])];
    if (na && nb && Number(xa[i]) !== Number(xb[i])) return Math.sign(Number(xa[i]) - Number(xb[i]));
    if (na !== nb) return na ? -1 : 1;
    if (!na && xa[i] !== xb[i]) return xa[i] < xb[i] ? -1 : 1;
  }
  return 0;
}

/** The version an unpinned source takes: the highest without a pre-release tag, else the highest. */
export function latestSkillVersion(versions: readonly string[]): string | null {
  const sorted = [...versions].sort(compareSemver);
  const released = sorted.filter((v) => !semverPattern.exec(v)?.[4]);
  return released.at(-1) ?? sorted.at(-1) ?? null;
}
