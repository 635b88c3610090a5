import { createHash, randomBytes } from 'node:crypto';
import { access, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { SkillFile } from '@paddock/protocol';
import type { SkillMount } from '../provider.ts';
import type { ServerMessage } from './frames.ts';

type SkillVersion = NonNullable<Extract<ServerMessage, { type: 'ensure' }>['skill_versions']>[number];

/**
 * A self-hosted runner's folder of a skill version (D14), under its own `skillsDir` (never a path
 * a sandbox controls), as `<creator>/<slug>/<version>`: written once, from the files `fetch`
 * answers, checked against the registry's digest, into a fresh folder beside it renamed into place
 * when whole; files read-only. Versions are immutable, so a folder that is there is right.
 */
export async function materializeSkill(
  skillsDir: string,
  skill: SkillVersion,
  fetch: () => Promise<SkillFile[]>,
): Promise<SkillMount> {
  // The names are checked by the frame's schema (no `/`, not `.` or `..`): one segment each.
  const dir = join(skillsDir, skill.creator, skill.slug, skill.version);
  if (await exists(dir)) return { slug: skill.slug, hostDir: dir };
  const files = (await fetch()).map((f) => ({
    path: f.path,
    bytes: Buffer.from(f.content, f.encoding === 'base64' ? 'base64' : 'utf8'),
  }));
  // The registry's hash: `path\0content\0` of each file by path, content in base64.
  const hash = createHash('sha256');
  for (const f of [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)))
    hash.update(`${f.path}\0${f.bytes.toString('base64')}\0`);
  if (hash.digest('hex') !== skill.digest)
    throw new Error(
      `skill ${skill.creator}/${skill.slug}@${skill.version}: its files do not match its digest`,
    );
  await mkdir(dirname(dir), { recursive: true, mode: 0o755 });
  const staging = `${dir}.${randomBytes(6).toString('hex')}.tmp`;
  await mkdir(staging, { mode: 0o755 });
  try {
    for (const file of files) {
      // Paths are checked by the frame's schema: relative, without `.`, `..` or empty segments.
      const path = join(staging, file.path);
      await mkdir(dirname(path), { recursive: true, mode: 0o755 });
      await writeFile(path, file.bytes, { mode: 0o444, flag: 'wx' });
    }
    await rename(staging, dir).catch(async (error: NodeJS.ErrnoException) => {
      // Another boot wrote the same version first: theirs is as good.
      if (!(await exists(dir))) throw error;
    });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return { slug: skill.slug, hostDir: dir };
}

function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}
