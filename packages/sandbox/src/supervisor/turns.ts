import type { Harness, HarnessTurnInput, SteeringInbox } from '@paddock/harness';
import type { DraftEvent, SteeredMessage, TurnCommand, TurnResult } from '@paddock/protocol';
import { type Run, type RunProcesses, withRun } from '@paddock/supervisor';
import type { ModelMessage } from 'ai';
import type { McpServers } from './mcp/mcp-servers.ts';
import { send } from './send.ts';

/** The part of `@paddock/harness` the supervisor uses. */
export interface HarnessModule {
  getHarness(name: string): Harness | undefined;
  preloadHarnesses(): Promise<void>;
  dropStandbyAgents(harness: string): void;
}

/** What `configure` told the supervisor: the environment of everything it starts, and where the workspace is. */
export interface SandboxContext {
  env: Record<string, string>;
  workspaceDir: string;
}

/** A harness that ignores its abort signal still gets its turn ended this long after an interrupt. */
const interruptGraceMs = 5_000;

interface ActiveTurn {
  turnId: string;
  controller: AbortController;
  inbox: TurnInbox;
  /** Known once the harness is loaded; a harness that does not steer refuses at once. */
  steerable?: boolean;
  finish(result: TurnResult<ModelMessage>): void;
  /** Stop: ends the turn and kills every process it started. */
  stop(): void;
}

/**
 * A turn's steering inbox: messages offered before the harness connects wait for it; once the turn
 * is over every offer answers false, so the runner queues the message for the next turn instead.
 */
class TurnInbox implements SteeringInbox {
  #take: ((message: SteeredMessage) => Promise<boolean>) | undefined;
  readonly #waiting: { message: SteeredMessage; resolve: (taken: boolean) => void }[] = [];
  #closed = false;
  /** Ids of the messages the harness took, in the order it took them: they travel with the result. */
  readonly taken: string[] = [];

  connect(take: (message: SteeredMessage) => Promise<boolean>): void {
    this.#take = take;
    for (const { message, resolve } of this.#waiting.splice(0)) void this.#offerNow(message).then(resolve);
  }

  offer(message: SteeredMessage): Promise<boolean> {
    if (this.#closed) return Promise.resolve(false);
    if (this.#take) return this.#offerNow(message);
    return new Promise((resolve) => this.#waiting.push({ message, resolve }));
  }

  async #offerNow(message: SteeredMessage): Promise<boolean> {
    const taken = await this.#take!(message);
    if (taken) this.taken.push(message.id);
    return taken;
  }

  close(): void {
    this.#closed = true;
    for (const { resolve } of this.#waiting.splice(0)) resolve(false);
  }
}

/** Runs one turn at a time and reports each as `turn.result`, whatever the harness does. */
export class TurnRunner {
  readonly #loadHarnesses: () => Promise<HarnessModule>;
  readonly #runs: RunProcesses;
  #active: ActiveTurn | undefined;
  /**
   * Interrupts for turns not started yet: a turn waits for `configure` and the proxy before it gets
   * here, and an interrupt sent in that window must still stop it.
   */
  readonly #interruptedEarly = new Set<string>();

  readonly #mcp: McpServers;

  constructor(loadHarnesses: () => Promise<HarnessModule>, runs: RunProcesses, mcp: McpServers) {
    this.#loadHarnesses = loadHarnesses;
    this.#runs = runs;
    this.#mcp = mcp;
  }

  /**
   * Runs a turn. It becomes the active turn at once, so an interrupt or a steered message that
   * arrives while it still waits for its context (`configure`, the proxy) reaches it.
   */
  async run(command: TurnCommand, contextReady: Promise<SandboxContext>): Promise<void> {
    const turnId = command.turn_id;
    if (this.#active) {
      const busy = `turn ${this.#active.turnId} is still running`;
      send({ type: 'turn.result', turn_id: turnId, result: failed('sandbox_busy', busy, true) });
      return;
    }
    if (this.#interruptedEarly.delete(turnId)) {
      send({ type: 'turn.result', turn_id: turnId, result: cancelled() });
      return;
    }
    const controller = new AbortController();
    /** Begins once the harness is ready: what it started to get ready is the sandbox's, not the turn's. */
    let run: Run | undefined;
    let finished = false;
    let stopped = false;
    let graceTimer: NodeJS.Timeout | undefined;
    const finish = (result: TurnResult<ModelMessage>): void => {
      if (finished) return;
      finished = true;
      clearTimeout(graceTimer);
      if (run) this.#runs.end(run);
      // Again as the turn ends: a process may have forked while the first sweep ran.
      if (stopped && run) this.#runs.killTurn(run);
      inbox.close();
      this.#active = undefined;
      const steeredIds = inbox.taken;
      send({
        type: 'turn.result',
        turn_id: turnId,
        result: steeredIds.length ? { ...result, steeredIds } : result,
      });
    };
    controller.signal.addEventListener('abort', () => {
      graceTimer = setTimeout(() => finish(cancelled()), interruptGraceMs);
    });
    const inbox = new TurnInbox();
    const stop = (): void => {
      stopped = true;
      controller.abort();
      if (run) this.#runs.killTurn(run);
    };
    this.#active = { turnId, controller, inbox, finish, stop };

    let harness: Harness | undefined;
    let context: SandboxContext;
    try {
      context = await contextReady;
      harness = (await this.#loadHarnesses()).getHarness(command.harness);
    } catch (error) {
      finish(
        failed('harness_unavailable', `cannot load harness ${command.harness}: ${describe(error)}`, false),
      );
      return;
    }
    if (!harness) {
      finish(failed('harness_unavailable', `no harness named ${command.harness}`, false));
      return;
    }
    if (this.#active?.turnId === turnId) this.#active.steerable = harness.steerable;
    if (!harness.steerable) inbox.close();
    const emit = (event: DraftEvent): void => {
      if (!finished) send({ type: 'event', turn_id: turnId, event });
    };
    const input: HarnessTurnInput = {
      turnId,
      model: command.model,
      instructions: command.instructions,
      // The transcript holds what harnesses answered, checked as the AI SDK's messages where a
      // peer sent them; user messages are text.
      messages: command.messages as ModelMessage[],
      modelSettings: command.model_options,
      // The sandbox's own API URL and thread token: a turn needs no credential of its own, so a
      // server that restarted can run the next turn without minting a new one.
      gateway: {
        baseURL: `${context.env.PADDOCK_API_URL}/v2/gateway/openai/v1`,
        apiKey: context.env.PADDOCK_TOKEN ?? '',
      },
      workspaceDir: context.workspaceDir,
      env: context.env,
      signal: controller.signal,
      inbox: harness.steerable ? inbox : undefined,
      profile: command.harness_profile,
      emit,
    };
    try {
      // What gets ready outlives the turn (MCP servers, an agent program); a Stop stops the wait.
      const aborted = new Promise<void>((resolve) =>
        controller.signal.addEventListener('abort', () => resolve()),
      );
      const ready = harness.runsMcpServers
        ? harness.prepare?.({ ...input, mcpServers: command.mcp_servers })
        : this.#mcp.prepare(command.mcp_servers ?? [], context, (data) => emit({ type: 'mcp.status', data }));
      await Promise.race([ready, aborted]);
      if (finished) return;
      run = this.#runs.begin('turn');
      if (stopped) this.#runs.killTurn(run);
      const result = await harness.runTurn(
        harness.runsMcpServers
          ? { ...input, mcpServers: command.mcp_servers, env: withRun(context.env, run) }
          : { ...input, mcp: this.#mcp, env: withRun(context.env, run) },
      );
      finish(result);
    } catch (error) {
      send({ type: 'log', level: 'error', message: `harness ${command.harness} crashed: ${stackOf(error)}` });
      finish(failed('harness_crashed', describe(error), false));
    } finally {
      this.#mcp.detach();
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
    else this.#interruptedEarly.add(turnId);
  }

  /** Ends the running turn, if any, after an error nothing caught. */
  crash(error: unknown): void {
    const active = this.#active;
    if (!active) return;
    active.controller.abort();
    active.finish(failed('harness_crashed', describe(error), false));
  }
}

function failed(code: string, message: string, retryable: boolean): TurnResult<ModelMessage> {
  return { stopReason: 'error', messages: [], lastAssistantText: '', error: { code, message, retryable } };
}

function cancelled(): TurnResult<ModelMessage> {
  return { stopReason: 'cancelled', messages: [], lastAssistantText: '' };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function stackOf(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}
