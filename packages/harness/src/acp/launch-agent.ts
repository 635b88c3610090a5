import { join } from 'node:path';
import type { McpServer } from '@agentclientprotocol/sdk';
import type { HarnessProfile } from '@paddock/protocol';
import type { SandboxHands } from '../sandbox-hands.ts';
import { AcpAgent } from './acp-agent.ts';
import { expand, gatewayUrl, type ProfileValues, prepareHome } from './agent-home.ts';
import { installKey } from './catalog.ts';

/** The program is not there to run: the turn fails with `harness_unavailable`. */
export class HarnessUnavailable extends Error {}

/** What a program is started with: the sandbox's environment and the thread's parts, or a standby's stand-ins. */
export interface LaunchParts {
  env: Record<string, string>;
  /** Where it reaches the Paddock API (the gateway's base URL is made from it). */
  apiUrl: string;
  token: string;
  model: string;
  instructions?: string;
  transcript?: string;
  mcpServers: McpServer[];
}

/** Where the sandbox shows a profile's install; HarnessUnavailable when it is not there. */
export async function installDir(
  sandbox: SandboxHands,
  profile: HarnessProfile,
  env: Record<string, string>,
): Promise<string> {
  const harnessDir = env.PADDOCK_HARNESS_DIR;
  const install = harnessDir ? join(harnessDir, installKey(profile)) : '';
  const installed =
    install !== '' &&
    (await sandbox.stat(harnessDir!, join(install, 'node_modules')).then(
      (found) => found.type === 'directory',
      () => false,
    ));
  if (!installed) throw new HarnessUnavailable(`${profile.program} is not installed on this runner`);
  return install;
}

/** Writes the program's home as its profile says and starts it, answering `initialize`. */
export async function launchAgent(
  sandbox: SandboxHands,
  profile: HarnessProfile,
  install: string,
  home: string,
  workspaceDir: string,
  parts: LaunchParts,
): Promise<AcpAgent> {
  const values: ProfileValues = {
    gateway_url: gatewayUrl(parts.apiUrl, profile.dialect),
    api_url: parts.apiUrl,
    model: parts.model,
    home,
    workspace: workspaceDir,
    install,
    platform: `${process.platform}-${process.arch}`,
  };
  const skillsDir = parts.env.PADDOCK_SKILLS_DIR || undefined;
  const skills = skillsDir
    ? (await sandbox.list(skillsDir, '.').catch(() => ({ entries: [] }))).entries.map((entry) => entry.name)
    : [];
  await prepareHome(sandbox, profile, values, {
    instructions: parts.instructions,
    transcript: parts.transcript,
    skillsDir,
    skills,
  });
  const { PADDOCK_RUN_ID: _run, ...sandboxEnv } = parts.env;
  const env: Record<string, string> = { ...sandboxEnv, HOME: home };
  for (const [key, value] of Object.entries(profile.env)) env[key] = expand(value, values);
  env[profile.token_env] = parts.token;
  if (profile.mcp_servers_env) env[profile.mcp_servers_env] = JSON.stringify(parts.mcpServers);
  // Node programs find the sandbox's Node before any other.
  env.PATH = [sandbox.nodeDir, join(install, 'node_modules', '.bin'), sandboxEnv.PATH]
    .filter(Boolean)
    .join(':');
  return AcpAgent.start({
    sandbox,
    command: profile.command.map((word) => expand(word, values)),
    binDir: join(install, 'node_modules', '.bin'),
    env,
    cwd: workspaceDir,
  });
}
