import { join } from 'node:path';
import { skillFrontMatter } from '@paddock/protocol';
import type { SandboxHands } from '../sandbox-hands.ts';

/** A SKILL.md longer than this is not read for its front matter. */
const maxSkillFileBytes = 256 * 1024;

/**
 * The system instructions' part on the thread's skills (D14): each skill's name, description and
 * the path of its SKILL.md, read in the sandbox from `$PADDOCK_SKILLS_DIR/<slug>/SKILL.md`. None
 * when the sandbox has no skills.
 */
export async function skillCatalog(
  sandbox: SandboxHands,
  skillsDir: string | undefined,
): Promise<string | undefined> {
  if (!skillsDir) return undefined;
  const { entries } = await sandbox.list(skillsDir, '.').catch(() => ({ entries: [] }));
  const lines: string[] = [];
  for (const slug of entries.map((entry) => entry.name).sort()) {
    const file = join(skillsDir, slug, 'SKILL.md');
    const text = await sandbox
      .readFile(skillsDir, file, maxSkillFileBytes)
      .then(({ data }) => data.toString('utf8'))
      .catch(() => '');
    const front = skillFrontMatter(text);
    if (front) lines.push(`- ${front.name} (${file}): ${oneLine(front.description)}`);
  }
  if (lines.length === 0) return undefined;
  return [
    `Skills: folders of instructions and files for particular tasks, read-only under ${skillsDir}. When a task matches a skill's description, read its SKILL.md first (the read tool takes these absolute paths; list shows a skill's other files) and follow it.`,
    ...lines,
  ].join('\n');
}

const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();
