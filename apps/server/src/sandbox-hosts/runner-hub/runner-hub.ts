import type { AdoptingSandboxHost, SandboxBoot, SandboxPlacement, TurnEventSink } from '@paddock/core';
import type {
  EventData,
  SandboxExec,
  SandboxExecResult,
  SteeredMessage,
  TurnCommand,
  TurnResult,
} from '@paddock/protocol';
import type { RunnerMessage } from '@paddock/sandbox';
import { acceptLink, type HubLogger, type Refuse, type RunnerScope } from './inbound.ts';
import { type Connection, RunnerRegistry, type RunnerSocket } from './registry.ts';
import { runnerLost, TurnRelay } from './relay.ts';
import { RunnerRequests } from './requests.ts';

/** A turn a reconnected runner holds that no turn here is waiting for. */
export interface HeldTurn {
  turnId: string;
  threadId: string;
  runnerId: string;
  /** The runner's agent, for a self-hosted runner. */
  agentId?: string;
}

export interface RunnerHubOptions {
  logger: HubLogger;
  timings: {
    /** How long a turn waits for its disconnected runner before it ends as lost (the adoption window). */
    lostAfterMs: number;
    /** How long a sandbox boot waits for a runner to connect when none is (30 s by default). */
    waitForRunnerMs?: number;
    /** How long a code run's answer may come after its own timeout before it fails (60 s by default). */
    execGraceMs?: number;
  };
  /** Takes over a held turn (this server's worker adopts it); false: the runner abandons it. */
  adopt(turn: HeldTurn): Promise<boolean>;
  /** The runner holds only these turns: the store's others on it cannot finish. */
  reconcile(runnerId: string, held: ReadonlySet<string>): Promise<void>;
  /** The hub of self-hosted runners (sandbox_e): its runners are agent-scoped. */
  selfHosted?: boolean;
  /**
   * A connection a sandbox made through its egress proxy, as its runner reports it; only for
   * threads whose sandbox that runner hosts.
   */
  onNetwork?(threadId: string, record: EventData['network.request']): void;
  /** A runner connected, or its connection went. */
  onRunners?(): void;
}

/**
 * The server's side of detached runners (`paddock runner`): the SandboxHost core uses, over the
 * WebSocket each runner opens. A runner that reconnects (to this server, or to one that restarted)
 * lists the turns it holds; turns this server does not know are offered to `adopt`.
 */
export class RunnerHub implements AdoptingSandboxHost {
  /** A runner keeps its turns running while no server is connected. */
  readonly adoptsTurns = true;
  readonly #options: RunnerHubOptions;
  readonly #runners: RunnerRegistry;
  readonly #turns: TurnRelay;
  readonly #requests: RunnerRequests;

  constructor(options: RunnerHubOptions) {
    this.#options = options;
    this.#runners = new RunnerRegistry({
      selfHosted: options.selfHosted ?? false,
      waitForRunnerMs: options.timings.waitForRunnerMs ?? 30_000,
    });
    this.#turns = new TurnRelay({
      send: (runnerId, message) => this.#runners.send(runnerId, message),
      logger: options.logger,
      lostAfterMs: options.timings.lostAfterMs,
    });
    this.#requests = new RunnerRequests({
      send: (runnerId, message) => this.#runners.send(runnerId, message),
      execGraceMs: options.timings.execGraceMs ?? 60_000,
    });
  }

  /** A runner connected (already authenticated); see `acceptLink`. */
  accept(socket: RunnerSocket, scope: RunnerScope = {}): void {
    acceptLink(socket, scope, this.#options.logger, {
      hello: (connection, hello, refuse) =>
        this.#hello(connection, hello).catch((error: unknown) => {
          // The runner learns only that it failed; what failed (a store error) stays in this log.
          this.#options.logger.error(
            { err: error, runner_id: connection.runnerId },
            'taking a runner hello failed',
          );
          refuse('hello: the server could not take it', 'error');
        }),
      message: (connection, message, refuse) => this.#route(connection.runnerId, message, refuse),
      malformed: (connection, turnId) => this.#turns.malformed(connection.runnerId, turnId),
      closed: (connection) => this.#gone(connection),
    });
  }

  /** Closes every runner connection (the runners keep their sandboxes and reconnect later). */
  close(): void {
    for (const { socket } of this.#runners.all()) socket.close(1001, 'server shutting down');
  }

  connectedRunners(): { runnerId: string; selfHosted: boolean }[] {
    const selfHosted = this.#options.selfHosted ?? false;
    return [...this.#runners.all()].map(({ runnerId }) => ({ runnerId, selfHosted }));
  }

  place(threadId: string, placement: SandboxPlacement): void {
    this.#runners.place(threadId, placement.agentId);
  }

  runnerFor(threadId: string): string {
    return this.#runners.runnerFor(threadId);
  }

  isRunning(threadId: string): boolean {
    return this.#runners.placed(threadId) !== undefined;
  }

  isBooting(threadId: string): boolean {
    return this.#runners.isBooting(threadId);
  }

  liveThreadIds(): string[] {
    return this.#runners.liveThreadIds();
  }

  /** A runner's sandbox takes an interrupt as the in-process runner's does. */
  canInterrupt(): boolean {
    return true;
  }

  async ensure(threadId: string, options: SandboxBoot): Promise<boolean> {
    if (this.isRunning(threadId)) return false;
    return this.#runners.booting(threadId, async () => {
      const { runnerId } = await this.#runners.pick(threadId);
      this.#runners.bootingOn(threadId, runnerId);
      const booted = await this.#requests.ensure(runnerId, threadId, options);
      this.#runners.sandboxOn(threadId, runnerId, booted ? options.onStatus : undefined);
      return booted;
    });
  }

  runTurn(threadId: string, command: TurnCommand, onEvent: TurnEventSink): Promise<TurnResult> {
    const connection = this.#runners.placed(threadId);
    if (!connection) return Promise.resolve(runnerLost('the thread has no running sandbox'));
    return this.#turns.run(threadId, connection.runnerId, command, onEvent);
  }

  attach(threadId: string, turnId: string, fromIndex: number, onEvent: TurnEventSink): Promise<TurnResult> {
    const holder = this.#turns.takeOffer(turnId);
    const connection = holder && this.#runners.get(holder.runnerId);
    if (!connection || !this.#runners.serves(connection, threadId))
      return Promise.resolve(runnerLost('the runner holding the turn disconnected'));
    return this.#turns.attach(turnId, threadId, connection.runnerId, fromIndex, onEvent);
  }

  release(turnId: string): void {
    this.#turns.release(turnId);
  }

  interruptOrphan(threadId: string): void {
    const connection = this.#runners.placed(threadId);
    if (connection)
      this.#runners.send(connection.runnerId, { type: 'interrupt-orphan', thread_id: threadId });
  }

  interrupt(threadId: string, turnId: string): void {
    this.#turns.interrupted(turnId);
    const runnerId = this.#turns.runnerOf(turnId) ?? this.#runners.placed(threadId)?.runnerId;
    if (runnerId) this.#runners.send(runnerId, { type: 'interrupt', thread_id: threadId, turn_id: turnId });
  }

  steer(threadId: string, turnId: string, messages: SteeredMessage[]): Promise<boolean> {
    const runnerId = this.#turns.runnerOf(turnId);
    if (!runnerId || !this.#runners.get(runnerId)) return Promise.resolve(false);
    return this.#requests.steer(runnerId, threadId, turnId, messages);
  }

  exec<E extends SandboxExec>(threadId: string, request: E): Promise<SandboxExecResult<E>> {
    const connection = this.#runners.placed(threadId);
    if (!connection) return Promise.reject(new Error('the thread has no running sandbox'));
    return this.#requests.exec(connection.runnerId, threadId, request);
  }

  async #hello(connection: Connection, hello: Extract<RunnerMessage, { type: 'hello' }>): Promise<void> {
    const { runnerId, agentId } = connection;
    const previous = this.#runners.get(runnerId);
    if (previous) {
      this.#gone(previous);
      previous.socket.close(1000, 'replaced by a newer connection');
    }
    this.#runners.connect(connection, new Set(hello.sandboxes));
    this.#options.onRunners?.();
    this.#options.logger.info(
      { runner_id: runnerId, sandboxes: hello.sandboxes.length, turns: hello.turns.length },
      'runner connected',
    );
    const held = new Set(hello.turns.map((t) => t.turn_id));
    this.#turns.runnerBack(runnerId, held);
    for (const { turn_id: turnId, thread_id: threadId } of hello.turns) {
      if (this.#turns.isRelayed(turnId)) continue;
      this.#turns.offer(turnId, { threadId, runnerId });
      const adopted = await this.#options
        .adopt({ turnId, threadId, runnerId, agentId })
        .catch((error: unknown) => {
          this.#options.logger.error({ err: error, turn_id: turnId }, 'adopting a turn failed');
          return false;
        });
      if (!adopted) {
        this.#turns.offer(turnId, undefined);
        this.#runners.send(runnerId, { type: 'abandon', turn_id: turnId });
      }
    }
    await this.#options
      .reconcile(runnerId, held)
      .catch((error: unknown) =>
        this.#options.logger.error({ err: error, runner_id: runnerId }, 'settling lost turns failed'),
      );
  }

  #route(runnerId: string, message: Exclude<RunnerMessage, { type: 'hello' }>, refuse: Refuse): void {
    if (message.type === 'sandbox.gone')
      this.#runners.sandboxGone(message.thread_id, runnerId, message.status);
    else if (message.type === 'network.request') {
      // A runner speaks only for the sandboxes it hosts.
      if (this.#runners.hosts(message.thread_id, runnerId))
        this.#options.onNetwork?.(message.thread_id, message.record);
    } else if (message.type === 'turn.event' || message.type === 'turn.result')
      this.#turns.entry(runnerId, message);
    else this.#requests.answer(runnerId, message, refuse);
  }

  /**
   * A runner disconnected: its boots, steering and code runs fail now; its turns wait for it (or a
   * restart) a while.
   */
  #gone(connection: Connection): void {
    if (!this.#runners.disconnect(connection)) return;
    const { runnerId } = connection;
    this.#options.logger.warn({ runner_id: runnerId }, 'runner disconnected');
    this.#requests.runnerGone(runnerId);
    this.#turns.runnerGone(runnerId);
    this.#options.onRunners?.();
  }
}
