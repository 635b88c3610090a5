import { join } from 'node:path';
import type { SkillFile } from '@paddock/protocol';
import type { SkillMount } from '../provider.ts';
import type { ServerMessage } from './frames.ts';
import { materializeSkill } from './runner-skills.ts';

type EnsureMessage = Extract<ServerMessage, { type: 'ensure' }>;

/**
 * The thread's workspace on this runner: the server's path, or, on a self-hosted runner (its own
 * `workspacesDir`), one of its own named by the thread: a server must not choose paths on it.
 */
export function ensureWorkspaceDir(message: EnsureMessage, workspacesDir: string | undefined): string {
  if (workspacesDir === undefined) return message.workspace_dir;
  if (!/^[A-Za-z0-9_-]+$/.test(message.thread_id)) throw new Error(`invalid thread id ${message.thread_id}`);
  // Made by the runner's boot, owned by the sandbox's uid (see workspaces/).
  return join(workspacesDir, message.thread_id);
}

/**
 * The boot's skills: the server's folders, or (self-hosted, with its own `skillsDir`) this runner's,
 * written from the files `fetch` asks the server for.
 */
export async function ensureSkills(
  message: EnsureMessage,
  skillsDir: string | undefined,
  fetch: (slug: string) => Promise<SkillFile[]>,
): Promise<SkillMount[] | undefined> {
  if (!message.skill_versions) return message.skills?.map((s) => ({ slug: s.slug, hostDir: s.host_dir }));
  if (skillsDir === undefined) throw new Error('this runner keeps no skills folder of its own');
  const mounts: SkillMount[] = [];
  for (const skill of message.skill_versions)
    mounts.push(await materializeSkill(skillsDir, skill, () => fetch(skill.slug)));
  return mounts;
}
