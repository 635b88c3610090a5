import { type HarnessProfile, threadAgentModelId } from '@paddock/protocol';
import type { HarnessTurnInput, HarnessWarmUp } from '../types.ts';
import type { AcpAgent } from './acp-agent.ts';
import {
  agentHome,
  threadEnvFile,
  writeHomeShellFiles,
  writeSessionId,
  writeThreadEnv,
} from './agent-home.ts';
import { conversationText } from './conversation-text.ts';
import { installDir, launchAgent } from './launch-agent.ts';

/** A program a standby sandbox started ahead of its thread, its session open (D9). */
export interface StandbyAgent {
  agent: AcpAgent;
  /** The port of its gateway door in the sandbox. */
  door: number;
  profile: HarnessProfile;
  workspaceDir: string;
  home: string;
}

/**
 * In a standby sandbox: starts the program of harness value `name` and opens its session before any
 * thread is known. It reaches the gateway through a door that takes the thread's token when the
 * thread comes, asks for the `thread` model (the gateway gives it the agent's model and
 * instructions), and its shells read the thread's environment from a file written then (see
 * `writeHomeShellFiles`). The door closes with the program.
 */
export async function startStandbyAgent(name: string, options: HarnessWarmUp): Promise<StandbyAgent> {
  const { profile, env, workspaceDir, sandbox } = options;
  const install = await installDir(sandbox, profile, env);
  const home = agentHome(workspaceDir, name);
  const door = await sandbox.openDoor();
  const closeDoor = () => void sandbox.closeDoor(door).catch(() => {});
  try {
    await writeHomeShellFiles(sandbox, workspaceDir, home);
    const agent = await launchAgent(sandbox, profile, install, home, workspaceDir, {
      env: { ...env, BASH_ENV: threadEnvFile(name) },
      apiUrl: `http://127.0.0.1:${door}`,
      token: 'standby',
      model: threadAgentModelId,
      mcpServers: [],
    });
    void agent.exited.then(closeDoor);
    try {
      if (profile.warm_prompt) await warmUpPrompt(agent, workspaceDir);
      await agent.openSession(workspaceDir, [], undefined);
      if (profile.set_model) await agent.setModel(threadAgentModelId);
    } catch (error) {
      agent.kill();
      throw error;
    }
    return { agent, door, profile, workspaceDir, home };
  } catch (error) {
    closeDoor();
    throw error;
  }
}

/**
 * The standby's program, for the thread's first turn when the thread asks nothing it was not
 * started with: the same program, no MCP servers or skills (given at start), no earlier
 * conversation. Then the thread's token, environment and session id are given to it. Otherwise it
 * is ended and undefined answered: the turn starts the program as it does after a restart.
 */
export async function takeStandbyAgent(
  name: string,
  ready: StandbyAgent,
  input: HarnessTurnInput,
  profile: HarnessProfile,
): Promise<AcpAgent | undefined> {
  const fits =
    ready.agent.alive &&
    JSON.stringify(ready.profile) === JSON.stringify(profile) &&
    ready.workspaceDir === input.workspaceDir &&
    !input.mcpServers?.length &&
    !input.env.PADDOCK_SKILLS_DIR &&
    input.env.PADDOCK_API_URL !== undefined &&
    conversationText(input.messages) === undefined;
  if (!fits) {
    ready.agent.kill();
    return undefined;
  }
  await writeThreadEnv(input.sandbox, threadEnvFile(name), input.env);
  await input.sandbox.aimDoor(ready.door, {
    apiUrl: input.env.PADDOCK_API_URL!,
    token: input.gateway.apiKey,
  });
  await writeSessionId(input.sandbox, input.workspaceDir, ready.home, ready.agent.sessionId!);
  return ready.agent;
}

/** How long a warm-up prompt may take; its model calls are refused, so it ends in moments. */
const warmUpPromptMs = 30_000;

/** One prompt in a throwaway session: what the program does before its first model call is done. */
async function warmUpPrompt(agent: AcpAgent, workspaceDir: string): Promise<void> {
  await agent.openSession(workspaceDir, [], undefined);
  const handlers = {
    onUpdate: () => {},
    onPermission: () => ({ outcome: { outcome: 'cancelled' as const } }),
  };
  // Its model calls fail: the prompt's answer is an error or an empty turn, either as good.
  await agent.prompt('warm-up', handlers, AbortSignal.timeout(warmUpPromptMs)).catch(() => {});
}
