import { cp, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { SkillMount } from './provider.ts';

/**
 * One folder holding a copy of each of the thread's skills at `<slug>`, made afresh: for sandboxes
 * that cannot bind the skills' own folders (which lie apart, one per version) under one folder of
 * slugs. Never a path a sandbox controls; readable by all, as the folders copied are.
 */
export async function copySkillFolders(dir: string, skills: readonly SkillMount[]): Promise<string> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true, mode: 0o755 });
  for (const skill of skills) {
    if (!/^[\w.-]+$/.test(skill.slug) || skill.slug === '.' || skill.slug === '..')
      throw new Error(`invalid skill slug: ${skill.slug}`);
    await cp(skill.hostDir, join(dir, skill.slug), { recursive: true });
  }
  return dir;
}
