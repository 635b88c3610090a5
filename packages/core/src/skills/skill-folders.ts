import { randomBytes } from 'node:crypto';
import { access, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { ResolvedSkill } from '@paddock/protocol';
import { type Db, findSkillVersion, type ThreadRow } from '@paddock/store';
import type { RemoteSkill } from '../turns/sandbox-host.ts';
import type { StoredSkillFile } from './skill-files.ts';

/**
 * The thread's skills as folders on the host, for its sandbox to bind read-only at
 * `/skills/<slug>`. Each version is written once, by the server, under `skillsDir` (which no
 * sandbox can write to): into a fresh folder beside it, renamed into place when whole; versions
 * are immutable, so a folder that is there is right.
 */
export async function skillFolders(
  db: Db,
  skillsDir: string,
  thread: Pick<ThreadRow, 'skills'>,
): Promise<{ slug: string; hostDir: string }[]> {
  const folders: { slug: string; hostDir: string }[] = [];
  for (const skill of JSON.parse(thread.skills) as ResolvedSkill[]) {
    const dir = join(skillsDir, skill.creator, skill.slug, skill.version);
    if (!(await exists(dir))) await writeFolder(dir, (await versionRow(db, skill)).files);
    folders.push({ slug: skill.slug, hostDir: dir });
  }
  return folders;
}

/**
 * The thread's skills for a host on another machine (sandbox_e), which writes their folders
 * itself: each version with its digest and files, handed out only to the runner booting the thread.
 */
export async function remoteSkills(db: Db, thread: Pick<ThreadRow, 'skills'>): Promise<RemoteSkill[]> {
  const skills: RemoteSkill[] = [];
  for (const skill of JSON.parse(thread.skills) as ResolvedSkill[]) {
    const { digest, files } = await versionRow(db, skill);
    skills.push({ slug: skill.slug, creator: skill.creator, version: skill.version, digest, files });
  }
  return skills;
}

async function versionRow(
  db: Db,
  skill: ResolvedSkill,
): Promise<{ digest: string; files: StoredSkillFile[] }> {
  const row = await findSkillVersion(db, skill.creator, skill.slug, skill.version);
  if (!row) throw new Error(`skill ${skill.creator}/${skill.slug}@${skill.version} is not in the registry`);
  return { digest: row.hash, files: JSON.parse(row.files) as StoredSkillFile[] };
}

async function writeFolder(dir: string, files: readonly StoredSkillFile[]): Promise<void> {
  await mkdir(dirname(dir), { recursive: true, mode: 0o755 });
  const staging = `${dir}.${randomBytes(6).toString('hex')}.tmp`;
  await mkdir(staging, { mode: 0o755 });
  try {
    for (const file of files) {
      const path = join(staging, file.path);
      await mkdir(dirname(path), { recursive: true, mode: 0o755 });
      await writeFile(path, Buffer.from(file.content, 'base64'), { mode: 0o644 });
    }
    await rename(staging, dir).catch(async (error: NodeJS.ErrnoException) => {
      // Another boot wrote the same version first: theirs is as good.
      if (!(await exists(dir))) throw error;
    });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}
