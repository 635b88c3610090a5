import { join } from 'node:path';
import type { GatewayDialect, HarnessProfile } from '@paddock/protocol';
import type { SandboxHands } from '../sandbox-hands.ts';

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
  /**
   * The machine's platform as npm names its native packages (`linux-x64`, `linux-arm64`): the runner
   * installs a program's optional native package for its own, which is the sandbox's.
   */
  platform: string;
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
 * Writes what the program reads at start into its home, in the sandbox: the profile's settings
 * files, its global instructions file (the agent's instructions, and the transcript when its session
 * cannot be loaded), and a link to each skill where it looks for skills. Rewritten at every start,
 * so an edited agent or a new pin takes effect with the next process.
 */
export async function prepareHome(
  sandbox: SandboxHands,
  profile: HarnessProfile,
  values: ProfileValues,
  contents: HomeContents,
) {
  const { home, workspace } = values;
  for (const [path, content] of Object.entries(profile.files)) {
    await writeHomeFile(sandbox, workspace, home, path, expand(content, values));
  }
  if (profile.instructions_file) {
    const text = [contents.instructions, contents.transcript].filter(Boolean).join('\n\n');
    if (text) await writeHomeFile(sandbox, workspace, home, profile.instructions_file, `${text}\n`);
    else await sandbox.remove(workspace, join(home, profile.instructions_file));
  }
  if (profile.skills_dir && contents.skillsDir) {
    const dir = join(home, profile.skills_dir);
    for (const slug of contents.skills ?? []) {
      await sandbox.symlink(workspace, join(dir, slug), join(contents.skillsDir, slug));
    }
  }
}

function writeHomeFile(
  sandbox: SandboxHands,
  workspace: string,
  home: string,
  path: string,
  content: string,
): Promise<void> {
  return sandbox.writeFile(workspace, join(home, path), content, 0o600);
}

/** The session a thread's program left in its home, to load in a new process. */
export async function readSessionId(
  sandbox: SandboxHands,
  workspace: string,
  home: string,
): Promise<string | undefined> {
  try {
    const { data } = await sandbox.readFile(workspace, join(home, sessionFile), 64 * 1024);
    const saved = JSON.parse(data.toString('utf8')) as { session_id?: unknown };
    return typeof saved.session_id === 'string' ? saved.session_id : undefined;
  } catch {
    return undefined;
  }
}

export async function writeSessionId(
  sandbox: SandboxHands,
  workspace: string,
  home: string,
  sessionId: string,
): Promise<void> {
  await writeHomeFile(sandbox, workspace, home, sessionFile, JSON.stringify({ session_id: sessionId }));
}

const sessionFile = '.paddock-session.json';

/** The sandbox's own /tmp, where a standby's program finds its thread's environment. */
const sandboxTmp = '/tmp';

/**
 * Where a standby's program finds its thread's environment (`BASH_ENV` names it): in the sandbox's
 * own /tmp, not the workspace, since it holds the thread's token and secrets.
 */
export function threadEnvFile(harness: string): string {
  return `${sandboxTmp}/paddock-thread-env-${harness}.sh`;
}

/** Written when the thread takes the standby's program: the thread's variables but PATH, HOME and the run marker. */
export async function writeThreadEnv(
  sandbox: SandboxHands,
  file: string,
  env: Record<string, string>,
): Promise<void> {
  const lines = Object.entries(env)
    .filter(([name]) => !['PATH', 'HOME', 'PADDOCK_RUN_ID'].includes(name) && /^[A-Za-z_]\w*$/.test(name))
    .map(([name, value]) => `export ${name}='${value.replaceAll("'", `'\\''`)}'`);
  await sandbox.writeFile(sandboxTmp, file, `${lines.join('\n')}\n`, 0o600);
}

/**
 * Shells that read no `BASH_ENV` read a file in the program's home instead: a login shell (Codex
 * runs `bash -lc`) its profile, and a shell whose stdin is a socket (Node's `pipe` stdio, as Claude
 * Code starts its commands) its `.bashrc`. Both read the thread's environment file.
 */
export async function writeHomeShellFiles(
  sandbox: SandboxHands,
  workspace: string,
  home: string,
): Promise<void> {
  const line = '[ -r "$BASH_ENV" ] && . "$BASH_ENV"\n';
  await writeHomeFile(sandbox, workspace, home, '.bash_profile', line);
  await writeHomeFile(sandbox, workspace, home, '.bashrc', line);
}
