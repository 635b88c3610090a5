import type {
  McpServer,
  PromptResponse,
  RequestPermissionRequest,
  RequestPermissionResponse,
} from '@agentclientprotocol/sdk';
import type { StopReason, TurnMcpServer, TurnResult } from '@paddock/protocol';
import type { ModelMessage } from 'ai';
import type { Harness, HarnessTurnInput } from '../types.ts';
import type { AcpAgent } from './acp-agent.ts';
import { createAcpRecorder } from './acp-recorder.ts';
import { agentHome, readSessionId, writeSessionId } from './agent-home.ts';
import { conversationText, newestUserText } from './conversation-text.ts';
import { HarnessUnavailable, installDir, type LaunchParts, launchAgent } from './launch-agent.ts';
import { type StandbyAgent, startStandbyAgent, takeStandbyAgent } from './standby-agent.ts';

/** A program that ignores `session/cancel` this long is killed (and resumed on the next turn). */
const cancelGraceMs = 4_500;

/**
 * A coding-agent program driven over ACP (D9), as its profile describes it. The program starts with
 * the thread's first turn (or ahead of it, `prepare`) and stays up across turns with one session;
 * after the sandbox restarts, the session is loaded, or the program is told the conversation so far.
 */
export function acpHarness(name: string): Harness {
  let agent: AcpAgent | undefined;
  let starting: Promise<AcpAgent> | undefined;
  /** The program a standby sandbox started ahead of its thread (`warmUp`), until a turn takes it. */
  let standby: Promise<StandbyAgent> | undefined;
  /** Why `prepare` could not start the program: the turn it prepared reports it. */
  let startError: unknown;

  async function start(input: HarnessTurnInput): Promise<AcpAgent> {
    const profile = input.profile;
    if (!profile) throw new HarnessUnavailable(`${name} has no program profile on this runner`);
    const waiting = standby;
    standby = undefined;
    const ahead = await waiting?.catch(() => undefined);
    const taken = ahead && (await takeStandbyAgent(name, ahead, input, profile));
    if (taken) return taken;
    const { sandbox, workspaceDir } = input;
    const install = await installDir(sandbox, profile, input.env);
    const home = agentHome(workspaceDir, name);
    const saved = profile.load_session ? await readSessionId(sandbox, workspaceDir, home) : undefined;
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
    const launched = await launchAgent(
      sandbox,
      profile,
      install,
      home,
      input.workspaceDir,
      parts(saved === undefined),
    );
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
      ready = await launchAgent(sandbox, profile, install, home, input.workspaceDir, parts(true));
      await ready.openSession(input.workspaceDir, mcpServers, undefined);
    }
    if (!loaded) await writeSessionId(sandbox, workspaceDir, home, ready.sessionId!);
    if (profile.set_model) await ready.setModel(input.model);
    return ready;
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
      standby ??= startStandbyAgent(name, options);
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
