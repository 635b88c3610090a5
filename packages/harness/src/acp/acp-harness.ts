import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type {
  McpServer,
  PromptResponse,
  RequestPermissionRequest,
  RequestPermissionResponse,
} from '@agentclientprotocol/sdk';
import {
  type HarnessProfile,
  type StopReason,
  type TurnMcpServer,
  type TurnResult,
  threadAgentModelId,
} from '@paddock/protocol';
import type { ModelMessage } from 'ai';
import type { Harness, HarnessTurnInput, HarnessWarmUp } from '../types.ts';
import { AcpAgent } from './acp-agent.ts';
import { createAcpRecorder } from './acp-recorder.ts';
import {
  expand,
  gatewayUrl,
  type ProfileValues,
  prepareHome,
  readSessionId,
  threadEnvFile,
  writeHomeShellFiles,
  writeSessionId,
  writeThreadEnv,
} from './agent-home.ts';
import { installKey } from './catalog.ts';
import { conversationText, newestUserText } from './conversation-text.ts';
import { type GatewayDoor, openGatewayDoor } from './gateway-door.ts';

/** A program that ignores `session/cancel` this long is killed (and resumed on the next turn). */
const cancelGraceMs = 4_500;

/** Where a thread's program keeps its home (settings, sessions): in the workspace, so it outlives the sandbox. */
export function agentHome(workspaceDir: string, harness: string): string {
  return join(workspaceDir, '.paddock', 'agents', harness);
}

/**
 * A coding-agent program driven over ACP (D9), as its profile describes it. The program starts with
 * the thread's first turn (or ahead of it, `prepare`) and stays up across turns with one session;
 * after the sandbox restarts, the session is loaded, or the program is told the conversation so far.
 */
export function acpHarness(name: string): Harness {
  let agent: AcpAgent | undefined;
  let starting: Promise<AcpAgent> | undefined;
  /** The program a standby sandbox started ahead of its thread (`warmUp`), until a turn takes it. */
  let standby: Promise<Standby> | undefined;
  /** Why `prepare` could not start the program: the turn it prepared reports it. */
  let startError: unknown;

  async function start(input: HarnessTurnInput): Promise<AcpAgent> {
    const profile = input.profile;
    if (!profile) throw new HarnessUnavailable(`${name} has no program profile on this runner`);
    const started = await takeStandby(input, profile);
    if (started) return started;
    const install = installDir(profile, input.env);
    const home = agentHome(input.workspaceDir, name);
    const saved = profile.load_session ? await readSessionId(home) : undefined;
    const mcpServers = acpMcpServers(input.mcpServers ?? [], input.env, input.gateway.apiKey);
    const parts = (withTranscript: boolean): LaunchParts => ({
      env: input.env,
      apiUrl: input.env.PADDOCK_API_URL ?? '',
      token: input.gateway.apiKey,
      model: input.model,
      instructions: input.instructions,
      transcript: withTranscript ? conversationText(input.messages) : undefined,
      mcpServers,
    });
    const launched = await launch(profile, install, home, input.workspaceDir, parts(saved === undefined));
    const loaded = await launched
      .openSession(input.workspaceDir, mcpServers, saved)
      .catch((error: unknown) => {
        launched.kill();
        throw error;
      });
    let ready = launched;
    if (saved !== undefined && !loaded) {
      // The saved session is gone: start again, told the conversation so far.
      launched.kill();
      ready = await launch(profile, install, home, input.workspaceDir, parts(true));
      await ready.openSession(input.workspaceDir, mcpServers, undefined);
    }
    if (!loaded) await writeSessionId(home, ready.sessionId!);
    if (profile.set_model) await ready.setModel(input.model);
    return ready;
  }

  /**
   * In a standby sandbox (D9): starts the program and opens its session before any thread is known.
   * It reaches the gateway through a door that takes the thread's token when the thread comes, asks
   * for the `thread` model (the gateway gives it the agent's model and instructions), and its shells
   * read the thread's environment from a file written then (see `writeHomeShellFiles`). The door
   * closes with the program.
   */
  async function startStandby(options: HarnessWarmUp): Promise<Standby> {
    const { profile, env, workspaceDir } = options;
    const install = installDir(profile, env);
    const home = agentHome(workspaceDir, name);
    const door = await openGatewayDoor();
    try {
      await writeHomeShellFiles(home);
      const agent = await launch(profile, install, home, workspaceDir, {
        env: { ...env, BASH_ENV: threadEnvFile(name) },
        apiUrl: door.url,
        token: 'standby',
        model: threadAgentModelId,
        mcpServers: [],
      });
      void agent.exited.then(() => door.close());
      try {
        await agent.openSession(workspaceDir, [], undefined);
        if (profile.set_model) await agent.setModel(threadAgentModelId);
      } catch (error) {
        agent.kill();
        throw error;
      }
      return { agent, door, profile, workspaceDir, home };
    } catch (error) {
      door.close();
      throw error;
    }
  }

  /**
   * The standby's program, for the thread's first turn when the thread asks nothing it was not
   * started with: the same program, no MCP servers or skills (given at start), no earlier
   * conversation. Otherwise it is ended, and the turn starts the program as it does after a restart.
   */
  async function takeStandby(
    input: HarnessTurnInput,
    profile: HarnessProfile,
  ): Promise<AcpAgent | undefined> {
    const waiting = standby;
    standby = undefined;
    const ready = await waiting?.catch(() => undefined);
    if (!ready) return undefined;
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
    await writeThreadEnv(threadEnvFile(name), input.env);
    ready.door.open({ apiUrl: input.env.PADDOCK_API_URL!, token: input.gateway.apiKey });
    await writeSessionId(ready.home, ready.agent.sessionId!);
    return ready.agent;
  }

  async function launch(
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

  /** The running program, started (once, however many callers) if it is not. */
  function ensure(input: HarnessTurnInput): Promise<AcpAgent> {
    if (agent?.alive) return Promise.resolve(agent);
    starting ??= start(input)
      .then((started) => {
        agent = started;
        return started;
      })
      .finally(() => {
        starting = undefined;
      });
    return starting;
  }

  return {
    name,
    steerable: false,
    runsMcpServers: true,

    warmUp(options) {
      standby ??= startStandby(options);
      return standby.then(() => {});
    },

    dropStandby() {
      const dropped = standby;
      standby = undefined;
      void dropped?.then(
        (ready) => ready.agent.kill(),
        () => {},
      );
    },

    async prepare(input) {
      await ensure(input).catch((error: unknown) => {
        startError = error;
      });
    },

    async runTurn(input) {
      if (input.signal.aborted) return { stopReason: 'cancelled', messages: [], lastAssistantText: '' };
      let running: AcpAgent;
      try {
        const prepareError = startError;
        startError = undefined;
        if (prepareError !== undefined) throw prepareError;
        running = await ensure(input);
      } catch (error) {
        const code = error instanceof HarnessUnavailable ? 'harness_unavailable' : 'harness_failed';
        return failed(input, code, describe(error));
      }
      const recorder = createAcpRecorder(input.emit, input.model);
      const onPermission = (request: RequestPermissionRequest): RequestPermissionResponse => {
        recorder.update({ sessionUpdate: 'tool_call_update', ...request.toolCall });
        const option = allowOption(request);
        input.emit({
          type: 'permission.request',
          data: {
            tool_id: request.toolCall.toolCallId,
            title: request.toolCall.title ?? '',
            decision: option?.kind ?? 'cancelled',
            option_id: option?.optionId ?? null,
          },
        });
        return option
          ? { outcome: { outcome: 'selected', optionId: option.optionId } }
          : { outcome: { outcome: 'cancelled' } };
      };
      let killTimer: NodeJS.Timeout | undefined;
      const onAbort = () => {
        killTimer = setTimeout(() => running.kill(), cancelGraceMs);
      };
      input.signal.addEventListener('abort', onAbort, { once: true });
      let response: PromptResponse | undefined;
      let error: unknown;
      try {
        response = await running.prompt(
          newestUserText(input.messages),
          { onUpdate: (update) => recorder.update(update), onPermission },
          input.signal,
        );
      } catch (caught) {
        error = caught;
      } finally {
        clearTimeout(killTimer);
        input.signal.removeEventListener('abort', onAbort);
      }
      const cancelled = input.signal.aborted;
      if (cancelled) {
        // A program may answer the cancel and still wait on the model call it was making (Claude
        // Code does, for as long as the call takes): a Stop ends the program with the turn, and the
        // next turn resumes its session in a new one.
        running.kill();
        if (agent === running) agent = undefined;
      }
      const turn = recorder.close(cancelled);
      // Some programs answer a cancel with an error (Qwen Code): a Stop ends the turn cancelled all the same.
      let stopReason: StopReason = cancelled ? 'cancelled' : stopReasonOf(response);
      let turnError: TurnResult['error'];
      if (!cancelled && error !== undefined) {
        stopReason = 'error';
        // Its stdout may close before its exit is seen: wait a moment for why it ended.
        const crashed = running.disconnected && (await running.exitedWithin(1_000));
        turnError = {
          code: crashed ? 'harness_crashed' : 'harness_error',
          message: running.failure ?? describe(error),
          retryable: false,
        };
        input.emit({ type: 'error', data: turnError });
      }
      return { stopReason, ...turn, ...(turnError ? { error: turnError } : {}) };
    },
  };
}

/** What a program is started with: the sandbox's environment and the thread's parts, or a standby's stand-ins. */
interface LaunchParts {
  env: Record<string, string>;
  /** Where it reaches the Paddock API (the gateway's base URL is made from it). */
  apiUrl: string;
  token: string;
  model: string;
  instructions?: string;
  transcript?: string;
  mcpServers: McpServer[];
}

interface Standby {
  agent: AcpAgent;
  door: GatewayDoor;
  profile: HarnessProfile;
  workspaceDir: string;
  home: string;
}

/** Where the sandbox shows a profile's install; HarnessUnavailable when it is not there. */
function installDir(profile: HarnessProfile, env: Record<string, string>): string {
  const harnessDir = env.PADDOCK_HARNESS_DIR;
  const install = harnessDir ? join(harnessDir, installKey(profile)) : '';
  if (!install || !existsSync(join(install, 'node_modules')))
    throw new HarnessUnavailable(`${profile.program} is not installed on this runner`);
  return install;
}

class HarnessUnavailable extends Error {}

function failed(input: HarnessTurnInput, code: string, message: string): TurnResult<ModelMessage> {
  const error = { code, message, retryable: false };
  input.emit({ type: 'error', data: error });
  return { stopReason: 'error', messages: [], lastAssistantText: '', error };
}

function stopReasonOf(response: PromptResponse | undefined): StopReason {
  if (response?.stopReason === 'cancelled') return 'cancelled';
  if (response?.stopReason === 'max_turn_requests' || response?.stopReason === 'max_tokens')
    return 'max_turns';
  return 'end_turn';
}

/** Policy: allow (the sandbox is the boundary), for the session where the agent offers that. */
function allowOption(request: RequestPermissionRequest) {
  const { options } = request;
  return options.find((o) => o.kind === 'allow_always') ?? options.find((o) => o.kind === 'allow_once');
}

/**
 * The agent's MCP servers as ACP names them: a command server is started by the program in the
 * sandbox; a url server is reached through the Paddock server's relay for this thread.
 */
function acpMcpServers(servers: TurnMcpServer[], env: Record<string, string>, token: string): McpServer[] {
  return servers.map((server) =>
    server.transport === 'stdio'
      ? {
          name: server.name,
          command: server.command,
          args: server.args,
          env: Object.entries(server.env).map(([name, value]) => ({ name, value })),
        }
      : {
          type: 'http' as const,
          name: server.name,
          url: `${env.PADDOCK_API_URL}/v2/threads/${env.PADDOCK_THREAD_ID}/mcp/${encodeURIComponent(server.name)}`,
          headers: [{ name: 'Authorization', value: `Bearer ${token}` }],
        },
  );
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
