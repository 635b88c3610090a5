import { randomBytes } from 'node:crypto';
import type { Harness, HarnessTurnInput, Models, SandboxHands } from '@paddock/harness';
import {
  type DraftEvent,
  runIdVariable,
  type SteeredMessage,
  type TurnCommand,
  type TurnResult,
} from '@paddock/protocol';
import type { ModelMessage } from 'ai';
import type { SupervisorClient } from '../supervisor-link/supervisor-client.ts';
import type { McpServers } from './mcp/mcp-servers.ts';
import type { SandboxHarnesses } from './sandbox-harnesses.ts';
import { TurnInbox } from './turn-inbox.ts';

/** What a thread's turns run with: the sandbox, its environment, the models, the thread's MCP relay. */
export interface TurnContext {
  hands: SandboxHands;
  /** The environment of everything the turn starts, as the sandbox sees it. */
  env: Record<string, string>;
  /** The workspace, as the sandbox sees it. */
  workspaceDir: string;
  models: Models;
  relay: { url: (server: string) => string; token: string };
}

/** A harness that ignores its abort signal still gets its turn ended this long after an interrupt. */
const interruptGraceMs = 5_000;

interface ActiveTurn {
  turnId: string;
  inbox: TurnInbox;
  /** Known once the harness is found; a harness that does not steer refuses at once. */
  steerable?: boolean;
  /** Stop: ends the turn and kills every process it started. */
  stop(): void;
}

/**
 * A sandbox's turns, one at a time, run here in the runner: the harness's loop (or its ACP client)
 * in this process, every tool and program in the sandbox through its supervisor. Each turn is a run
 * the supervisor knows by its marker, so a Stop kills every process the turn started there.
 */
export class TurnRunner {
  readonly #client: SupervisorClient;
  readonly #harnesses: SandboxHarnesses;
  readonly #mcp: McpServers;
  #active: ActiveTurn | undefined;

  constructor(client: SupervisorClient, harnesses: SandboxHarnesses, mcp: McpServers) {
    this.#client = client;
    this.#harnesses = harnesses;
    this.#mcp = mcp;
  }

  get turnId(): string | undefined {
    return this.#active?.turnId;
  }

  /** Runs a turn to its end; never rejects (whatever ends it, it ends with a result). */
  async run(
    command: TurnCommand,
    context: TurnContext,
    onEvent: (event: DraftEvent) => void,
  ): Promise<TurnResult<ModelMessage>> {
    const turnId = command.turn_id;
    if (this.#active) return failed('sandbox_busy', `turn ${this.#active.turnId} is still running`, true);
    const controller = new AbortController();
    const inbox = new TurnInbox();
    const marker = `turn-${randomBytes(12).toString('hex')}`;
    let begun: Promise<unknown> | undefined;
    let finished = false;
    const stop = (): void => {
      controller.abort();
      // After the run began there (or at once): every process the turn started is killed.
      void (begun ?? Promise.resolve())
        .then(() => this.#client.request({ op: 'run.kill', marker }))
        .catch(() => {});
    };
    const active: ActiveTurn = { turnId, inbox, stop };
    this.#active = active;
    const emit = (event: DraftEvent): void => {
      if (!finished) onEvent(event);
    };
    try {
      const harness = this.#harnesses.get(command.harness);
      if (!harness) return failed('harness_unavailable', `no harness named ${command.harness}`, false);
      this.#harnesses.dropStandbysBut(command.harness);
      active.steerable = harness.steerable;
      if (!harness.steerable) inbox.close();
      const input = turnInput(command, context, harness, { signal: controller.signal, inbox, emit });
      const aborted = new Promise<void>((resolve) =>
        controller.signal.addEventListener('abort', () => resolve()),
      );
      // What gets ready outlives the turn (MCP servers, an agent program); a Stop stops the wait.
      const ready = harness.runsMcpServers
        ? harness.prepare?.({ ...input, mcpServers: command.mcp_servers })
        : this.#mcp.prepare(command.mcp_servers ?? [], { ...context, sandbox: context.hands }, (data) =>
            emit({ type: 'mcp.status', data }),
          );
      await Promise.race([ready, aborted]);
      if (controller.signal.aborted) return cancelled();
      // Not awaited: the supervisor takes its frames in order, so every process the turn starts, and
      // a Stop's sweep, come after the run began there.
      const begin = () => {
        if (begun) return;
        begun = this.#client.request({ op: 'run.begin', marker, kind: 'turn' });
        begun.catch(() => {});
      };
      const env = { ...context.env, [runIdVariable]: marker };
      let turn: Promise<TurnResult<ModelMessage>>;
      if (harness.runsMcpServers) {
        // An ACP program starts the turn's processes itself: its run begins with the turn.
        begin();
        turn = harness.runTurn({ ...input, mcpServers: command.mcp_servers, env });
      } else {
        // A loop of Paddock's own starts them through its hands: the run begins with the first, so a
        // turn that starts none (an answer, file tools) asks nothing of the supervisor.
        const sandbox: SandboxHands = {
          ...input.sandbox,
          spawn: (options) => {
            if (!options.keep) begin();
            return input.sandbox.spawn(options);
          },
        };
        turn = harness.runTurn({ ...input, sandbox, mcp: this.#mcp, env });
      }
      const result = await Promise.race([turn, afterAbort(controller.signal, interruptGraceMs)]);
      return inbox.taken.length ? { ...result, steeredIds: inbox.taken } : result;
    } catch (error) {
      if (controller.signal.aborted) return cancelled();
      return failed('harness_crashed', error instanceof Error ? error.message : String(error), false);
    } finally {
      finished = true;
      inbox.close();
      this.#mcp.detach();
      if (this.#active === active) this.#active = undefined;
      void begun
        ?.then(() => this.#client.request({ op: 'run.end', marker }))
        .then(() =>
          controller.signal.aborted ? this.#client.request({ op: 'run.kill', marker }) : undefined,
        )
        .catch(() => {});
    }
  }

  /** Offers messages to the running turn, in order; true only if it took every one. */
  async steer(turnId: string, messages: SteeredMessage[]): Promise<boolean> {
    const active = this.#active;
    if (active?.turnId !== turnId || active.steerable === false) return false;
    const taken = await Promise.all(messages.map((message) => active.inbox.offer(message)));
    return taken.every(Boolean);
  }

  interrupt(turnId: string): void {
    if (this.#active?.turnId === turnId) this.#active.stop();
  }
}

function turnInput(
  command: TurnCommand,
  context: TurnContext,
  harness: Harness,
  turn: { signal: AbortSignal; inbox: TurnInbox; emit: (event: DraftEvent) => void },
): HarnessTurnInput {
  return {
    turnId: command.turn_id,
    model: command.model,
    instructions: command.instructions,
    // The transcript holds what harnesses answered, checked as the AI SDK's messages where a peer
    // sent them; user messages are text.
    messages: command.messages as ModelMessage[],
    modelSettings: command.model_options,
    models: context.models,
    // Programs in the sandbox reach the gateway through its API door, with the thread's token.
    gateway: {
      baseURL: `${context.env.PADDOCK_API_URL}/v2/gateway/openai/v1`,
      apiKey: context.env.PADDOCK_TOKEN ?? '',
    },
    sandbox: context.hands,
    workspaceDir: context.workspaceDir,
    env: context.env,
    signal: turn.signal,
    inbox: harness.steerable ? turn.inbox : undefined,
    profile: command.harness_profile,
    emit: turn.emit,
  };
}

/** Settles with a cancelled result `graceMs` after the signal aborts: a harness that ignores it still ends. */
function afterAbort(signal: AbortSignal, graceMs: number): Promise<TurnResult<ModelMessage>> {
  return new Promise((resolve) => {
    signal.addEventListener('abort', () => setTimeout(() => resolve(cancelled()), graceMs).unref(), {
      once: true,
    });
  });
}

function failed(code: string, message: string, retryable: boolean): TurnResult<ModelMessage> {
  return { stopReason: 'error', messages: [], lastAssistantText: '', error: { code, message, retryable } };
}

function cancelled(): TurnResult<ModelMessage> {
  return { stopReason: 'cancelled', messages: [], lastAssistantText: '' };
}
