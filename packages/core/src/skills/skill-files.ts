import { createHash } from 'node:crypto';
import { type SkillFile, type SkillVersionRecord, skillFrontMatter, skillLimits } from '@paddock/protocol';
import type { SkillVersionRow } from '@paddock/store';
import { PaddockError } from '../errors.ts';

/** A skill's file as stored: its bytes in base64. */
export interface StoredSkillFile {
  path: string;
  content: string;
}

/** What a publish stores of a version's files: sorted by path, their hash, the front matter. */
export interface SkillContent {
  files: StoredSkillFile[];
  hash: string;
  name: string;
  description: string;
}

/**
 * Decodes and checks a version's files: sizes within `skillLimits`, a `SKILL.md` at the root with
 * front matter `name` and `description` (422 `invalid_skill` otherwise).
 */
export function skillContent(files: readonly SkillFile[]): SkillContent {
  const decoded = files
    .map((file) => ({
      path: file.path,
      bytes: Buffer.from(file.content, file.encoding === 'base64' ? 'base64' : 'utf8'),
    }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const total = decoded.reduce((sum, file) => sum + file.bytes.length, 0);
  if (total > skillLimits.totalBytes)
    throw invalidSkill(`a version holds at most ${skillLimits.totalBytes} bytes (these files: ${total})`);
  const paths = new Set(decoded.map((f) => f.path));
  for (const path of paths) {
    // A file cannot also be a folder of other files.
    if ([...paths].some((other) => other.startsWith(`${path}/`)))
      throw invalidSkill(`${path} is both a file and a folder`);
  }
  const skillMd = decoded.find((f) => f.path === 'SKILL.md');
  if (!skillMd) throw invalidSkill('a skill needs a SKILL.md at its root');
  const front = skillFrontMatter(skillMd.bytes.toString('utf8'));
  if (!front)
    throw invalidSkill(
      'SKILL.md must start with YAML front matter (between --- lines) giving a name and a description',
    );
  const stored = decoded.map((f) => ({ path: f.path, content: f.bytes.toString('base64') }));
  const hash = createHash('sha256');
  for (const file of stored) hash.update(`${file.path}\0${file.content}\0`);
  return { files: stored, hash: hash.digest('hex'), ...front };
}

/** A stored version as answered: text files as `utf8`, others as `base64`. */
export function skillVersionRecord(row: SkillVersionRow): SkillVersionRecord {
  const files = (JSON.parse(row.files) as StoredSkillFile[]).map((file) => {
    const bytes = Buffer.from(file.content, 'base64');
    const text = bytes.toString('utf8');
    return Buffer.from(text, 'utf8').equals(bytes)
      ? { path: file.path, content: text, encoding: 'utf8' as const }
      : { path: file.path, content: file.content, encoding: 'base64' as const };
  });
  return {
    creator: row.creator,
    slug: row.slug,
    version: row.version,
    name: row.name,
    description: row.description,
    public: row.public === 1,
    hash: row.hash,
    created_at: row.created_at,
    files,
  };
}

const invalidSkill = (message: string) => new PaddockError('invalid_skill', message);
