import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { McpServer } from '@agentclientprotocol/sdk';
import type { HarnessProfile } from '@paddock/protocol';
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
export function installDir(profile: HarnessProfile, env: Record<string, string>): string {
  const harnessDir = env.PADDOCK_HARNESS_DIR;
  const install = harnessDir ? join(harnessDir, installKey(profile)) : '';
  if (!install || !existsSync(join(install, 'node_modules')))
    throw new HarnessUnavailable(`${profile.program} is not installed on this runner`);
  return install;
}

/** Writes the program's home as its profile says and starts it, answering `initialize`. */
export async function launchAgent(
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
  };
  const skillsDir = parts.env.PADDOCK_SKILLS_DIR || undefined;
  await prepareHome(profile, values, {
    instructions: parts.instructions,
    transcript: parts.transcript,
    skillsDir,
    skills: skillsDir ? await readdir(skillsDir).catch(() => []) : [],
  });
  const { PADDOCK_RUN_ID: _run, ...sandboxEnv } = parts.env;
  const env: Record<string, string> = { ...sandboxEnv, HOME: home };
  for (const [key, value] of Object.entries(profile.env)) env[key] = expand(value, values);
  env[profile.token_env] = parts.token;
  if (profile.mcp_servers_env) env[profile.mcp_servers_env] = JSON.stringify(parts.mcpServers);
  // Node programs find the supervisor's Node before any other.
  env.PATH = [dirname(process.execPath), join(install, 'node_modules', '.bin'), sandboxEnv.PATH]
    .filter(Boolean)
    .join(':');
  return AcpAgent.start({
    command: profile.command.map((word) => expand(word, values)),
    binDir: join(install, 'node_modules', '.bin'),
    env,
    cwd: workspaceDir,
  });
}
