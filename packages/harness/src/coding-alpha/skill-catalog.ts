import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { skillFrontMatter } from '@paddock/protocol';

/**
 * The system instructions' part on the thread's skills (D14): each skill's name, description and
 * the path of its SKILL.md, read from `$PADDOCK_SKILLS_DIR/<slug>/SKILL.md`. None when the sandbox
 * has no skills.
 */
export async function skillCatalog(skillsDir: string | undefined): Promise<string | undefined> {
  if (!skillsDir) return undefined;
  const slugs = await readdir(skillsDir).catch(() => [] as string[]);
  const lines: string[] = [];
  for (const slug of slugs.sort()) {
    const file = join(skillsDir, slug, 'SKILL.md');
    const front = skillFrontMatter(await readFile(file, 'utf8').catch(() => ''));
    if (front) lines.push(`- ${front.name} (${file}): ${oneLine(front.description)}`);
  }
  if (lines.length === 0) return undefined;
  return [
    `Skills: folders of instructions and files for particular tasks, read-only under ${skillsDir}. When a task matches a skill's description, read its SKILL.md first (the read tool takes these absolute paths; list shows a skill's other files) and follow it.`,
    ...lines,
  ].join('\n');
}

const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();
