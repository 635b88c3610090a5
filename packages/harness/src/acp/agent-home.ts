import { mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { GatewayDialect, HarnessProfile } from '@paddock/protocol';

/** Where a thread's program keeps its home (settings, sessions): in the workspace, so it outlives the sandbox. */
export function agentHome(workspaceDir: string, harness: string): string {
  return join(workspaceDir, '.paddock', 'agents', harness);
}

/** The values a profile's `{{placeholders}}` take (see `harnessProfileSchema`). */
export interface ProfileValues {
  gateway_url: string;
  api_url: string;
  model: string;
  home: string;
  workspace: string;
  install: string;
}

/** The gateway's base URL for a dialect, as each program's own client expects it (D16). */
export function gatewayUrl(apiUrl: string, dialect: GatewayDialect): string {
  if (dialect === 'anthropic') return `${apiUrl}/v2/gateway/anthropic`;
  if (dialect === 'gemini') return `${apiUrl}/v2/gateway/gemini`;
  return `${apiUrl}/v2/gateway/openai/v1`;
}

/** Fills a profile string's placeholders; an unknown one is left as written. */
export function expand(template: string, values: ProfileValues): string {
  return template.replace(/\{\{(\w+)\}\}/g, (whole, name: string) =>
    Object.hasOwn(values, name) ? values[name as keyof ProfileValues] : whole,
  );
}

export interface HomeContents {
  instructions?: string;
  /** Earlier turns, for a program that starts without its session: written after the instructions. */
  transcript?: string;
  /** The thread's skills folder in the sandbox (PADDOCK_SKILLS_DIR), each skill a folder in it. */
  skillsDir?: string;
  skills?: string[];
}

/**
 * Writes what the program reads at start into its home: the profile's settings files, its global
 * instructions file (the agent's instructions, and the transcript when its session cannot be
 * loaded), and a link to each skill where it looks for skills. Rewritten at every start, so an
 * edited agent or a new pin takes effect with the next process.
 */
export async function prepareHome(profile: HarnessProfile, values: ProfileValues, contents: HomeContents) {
  const home = values.home;
  await mkdir(home, { recursive: true, mode: 0o700 });
  for (const [path, content] of Object.entries(profile.files)) {
    await writeHomeFile(home, path, expand(content, values));
  }
  if (profile.instructions_file) {
    const text = [contents.instructions, contents.transcript].filter(Boolean).join('\n\n');
    if (text) await writeHomeFile(home, profile.instructions_file, `${text}\n`);
    else await rm(join(home, profile.instructions_file), { force: true });
  }
  if (profile.skills_dir && contents.skillsDir) {
    const dir = join(home, profile.skills_dir);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    for (const slug of contents.skills ?? []) {
      await rm(join(dir, slug), { recursive: true, force: true });
      await symlink(join(contents.skillsDir, slug), join(dir, slug));
    }
  }
}

async function writeHomeFile(home: string, path: string, content: string): Promise<void> {
  const file = join(home, path);
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  await writeFile(file, content, { mode: 0o600 });
}

/** The session a thread's program left in its home, to load in a new process. */
export async function readSessionId(home: string): Promise<string | undefined> {
  try {
    const saved = JSON.parse(await readFile(join(home, sessionFile), 'utf8')) as { session_id?: unknown };
    return typeof saved.session_id === 'string' ? saved.session_id : undefined;
  } catch {
    return undefined;
  }
}

export async function writeSessionId(home: string, sessionId: string): Promise<void> {
  await writeHomeFile(home, sessionFile, JSON.stringify({ session_id: sessionId }));
}

const sessionFile = '.paddock-session.json';

/**
 * Where a standby's program finds its thread's environment (`BASH_ENV` names it): in the sandbox's
 * own /tmp, not the workspace, since it holds the thread's token and secrets.
 */
export function threadEnvFile(harness: string): string {
  return `/tmp/paddock-thread-env-${harness}.sh`;
}

/** Written when the thread takes the standby's program: the thread's variables but PATH, HOME and the run marker. */
export async function writeThreadEnv(file: string, env: Record<string, string>): Promise<void> {
  const lines = Object.entries(env)
    .filter(([name]) => !['PATH', 'HOME', 'PADDOCK_RUN_ID'].includes(name) && /^[A-Za-z_]\w*$/.test(name))
    .map(([name, value]) => `export ${name}='${value.replaceAll("'", `'\\''`)}'`);
  await writeFile(file, `${lines.join('\n')}\n`, { mode: 0o600 });
}

/**
 * Shells that read no `BASH_ENV` read a file in the program's home instead: a login shell (Codex
 * runs `bash -lc`) its profile, and a shell whose stdin is a socket (Node's `pipe` stdio, as Claude
 * Code starts its commands) its `.bashrc`. Both read the thread's environment file.
 */
export async function writeHomeShellFiles(home: string): Promise<void> {
  const line = '[ -r "$BASH_ENV" ] && . "$BASH_ENV"\n';
  await writeHomeFile(home, '.bash_profile', line);
  await writeHomeFile(home, '.bashrc', line);
}
