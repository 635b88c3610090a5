import { randomInt } from 'node:crypto';
import {
  type SandboxHost,
  type SandboxPlacement,
  SandboxUnavailableError,
  type TurnEventSink,
  type TurnResult,
} from '@paddock/core';
import { type SandboxExec, type SandboxExecResult, sandboxExecResultSchemas } from '@paddock/protocol';
import { parseFrame, type RunnerMessage, runnerMessageSchema, type ServerMessage } from '@paddock/sandbox';
import type { ModelMessage } from 'ai';
import type { Logger } from 'pino';
import type { WebSocket } from 'ws';

interface Connection {
  runnerId: string;
  socket: WebSocket;
  /** A self-hosted runner's agent: it serves that agent's threads only. */
  agentId?: string;
}

interface HubTurn {
  threadId: string;
  runnerId: string;
  /** The next index expected: anything below it was received already (a replay overlaps). */
  next: number;
  onEvent: TurnEventSink;
  /** Stores of this turn's events, in order; acknowledgements follow them. */
  chain: Promise<void>;
  interrupted: boolean;
  resolve(result: TurnResult): void;
  /** Set while the turn's runner is disconnected: ends the turn if it never comes back. */
  lost?: NodeJS.Timeout;
}

type EnsureOptions = Parameters<SandboxHost['ensure']>[1];

export interface RunnerHubOptions {
  logger: Logger;
  /** How long a turn waits for its disconnected runner before it ends as lost (the adoption window). */
  lostAfterMs: number;
  /** How long a sandbox boot waits for a runner to connect when none is. */
  waitForRunnerMs?: number;
  /** The hub of self-hosted runners (sandbox_e): its runners are agent-scoped. */
  selfHosted?: boolean;
}

/** Whom a connected runner serves: every thread (the deployment's runners), or one agent's (self-hosted). */
export interface RunnerScope {
  agentId?: string;
}

/**
 * The server's side of detached runners (`paddock runner`): the SandboxHost core uses, over the
 * WebSocket each runner opens. A runner that reconnects (to this server, or to one that restarted)
 * lists the turns it holds; turns this server does not know are offered to `adopt`.
 */
export class RunnerHub implements SandboxHost {
  readonly #options: RunnerHubOptions;
  readonly #connections = new Map<string, Connection>();
  /** Thread → the runner its sandbox runs on. */
  readonly #sandboxes = new Map<string, string>();
  /**
   * Thread → the status listener of the boot that made its running sandbox, told when the runner
   * says that sandbox is gone (an idle stop, a crash): core revokes that boot's thread token then.
   */
  readonly #bootListeners = new Map<string, EnsureOptions['onStatus']>();
  readonly #turns = new Map<string, HubTurn>();
  /** Turns a runner listed that `adopt` took: thread and runner, until `attach` picks them up. */
  readonly #adoptable = new Map<string, { threadId: string; runnerId: string }>();
  readonly #ensures = new Map<
    number,
    {
      runnerId: string;
      options: EnsureOptions;
      done(outcome: { booted: boolean; error?: string }): void;
    }
  >();
  /** Threads whose sandbox boot (or wait for a runner to boot it on) is under way here. */
  readonly #booting = new Set<string>();
  readonly #steers = new Map<number, { runnerId: string; resolve(taken: boolean): void }>();
  /** Thread → its agent (`place`): a self-hosted runner gets only its own agent's threads. */
  readonly #agents = new Map<string, string>();
  readonly #execs = new Map<
    number,
    {
      runnerId: string;
      op: SandboxExec['op'];
      resolve(result: SandboxExecResult): void;
      reject(error: Error): void;
    }
  >();
  #waiting: (() => void)[] = [];
  /**
   * Request numbers start at random: a runner may answer, after a reconnect, a request of the server
   * before a restart, which must not pass for one of this server's (another thread's code run).
   */
  #req = randomInt(2 ** 47);
  /** Set by the wiring: takes over a turn a runner holds that no turn here is waiting for. */
  adopt: (turn: {
    turnId: string;
    threadId: string;
    runnerId: string;
    agentId?: string;
  }) => Promise<boolean> = async () => false;
  /** Set by the wiring: the runner holds only these turns; the store's others on it cannot finish. */
  reconcile: (runnerId: string, held: ReadonlySet<string>) => Promise<void> = async () => {};

  constructor(options: RunnerHubOptions) {
    this.#options = options;
  }

  /**
   * A runner connected (already authenticated): its first message is `hello`. A self-hosted runner's
   * id is prefixed with its agent, so it can never pass for another runner (a reconnect replacing
   * it, or the turns `reconcile` settles). Every frame is parsed with the link's schemas first: a
   * runner may be a user's machine, so a frame that does not parse (or comes out of order) closes
   * this link, with the reason logged, and touches nothing else.
   */
  accept(socket: WebSocket, scope: RunnerScope = {}): void {
    let connection: Connection | undefined;
    let refused = false;
    const refuse = (reason: string, level: 'warn' | 'error' = 'warn') => {
      refused = true;
      this.#options.logger[level](
        { runner_id: connection?.runnerId, agent_id: scope.agentId, reason },
        'runner link closed: a frame it sent was refused',
      );
      // A close reason is at most 123 bytes: ASCII only, cut short.
      socket.close(1008, reason.replace(/[^\x20-\x7e]/g, '?').slice(0, 120));
    };
    socket.on('message', (data) => {
      if (refused) return;
      const parsed = parseFrame(runnerMessageSchema, data);
      if ('error' in parsed) {
        // A turn of this runner's that a malformed frame was for ends now: its replay after a
        // reconnect would be refused again, and the turn would wait for ever.
        const turn = parsed.turnId === undefined ? undefined : this.#turns.get(parsed.turnId);
        if (connection && turn?.runnerId === connection.runnerId)
          this.#end(
            parsed.turnId!,
            runnerError('runner_protocol_error', 'the runner sent a malformed frame of the turn'),
          );
        return refuse(parsed.error);
      }
      const message = parsed.message as RunnerMessage;
      if (message.type === 'hello') {
        if (connection) return refuse('hello: sent twice');
        const runnerId = scope.agentId ? `${scope.agentId}/${message.runner_id}` : message.runner_id;
        connection = { runnerId, socket, agentId: scope.agentId };
        this.#hello(connection, message).catch((error: unknown) => {
          // The runner learns only that it failed; what failed (a store error) stays in this log.
          this.#options.logger.error(
            { err: error, runner_id: connection?.runnerId },
            'taking a runner hello failed',
          );
          refuse('hello: the server could not take it', 'error');
        });
      } else if (!connection) refuse(`${message.type}: before hello`);
      else this.#route(connection, message, refuse);
    });
    socket.on('close', () => {
      if (connection && this.#connections.get(connection.runnerId) === connection) this.#gone(connection);
    });
    socket.on('error', () => socket.terminate());
  }

  /** Closes every runner connection (the runners keep their sandboxes and reconnect later). */
  close(): void {
    for (const { socket } of this.#connections.values()) socket.close(1001, 'server shutting down');
  }

  place(threadId: string, placement: SandboxPlacement): void {
    this.#agents.set(threadId, placement.agentId);
  }

  runnerFor(threadId: string): string {
    // A self-hosted runner's claim of a sandbox counts only while it may host it (connected, its agent).
    const claimed = this.#options.selfHosted ? undefined : this.#sandboxes.get(threadId);
    return this.#placed(threadId)?.runnerId ?? claimed ?? this.#serving(threadId)?.runnerId ?? 'unassigned';
  }

  isRunning(threadId: string): boolean {
    return this.#placed(threadId) !== undefined;
  }

  isBooting(threadId: string): boolean {
    return this.#booting.has(threadId);
  }

  /**
   * The sandboxes of the connected runners: one that stays away stops vouching for its own, and they
   * count again once it is back. A self-hosted runner's use none of the deployment's machines.
   */
  liveThreadIds(): string[] {
    if (this.#options.selfHosted) return [];
    const connected = [...this.#sandboxes].filter(([, runnerId]) => this.#connections.has(runnerId));
    return [...new Set([...connected.map(([threadId]) => threadId), ...this.#booting])];
  }

  async ensure(threadId: string, options: EnsureOptions): Promise<boolean> {
    if (this.isRunning(threadId)) return false;
    this.#booting.add(threadId);
    try {
      return await this.#ensure(threadId, options);
    } finally {
      this.#booting.delete(threadId);
    }
  }

  async #ensure(threadId: string, options: EnsureOptions): Promise<boolean> {
    const connection = await this.#pickRunner(threadId);
    const req = ++this.#req;
    const booted = await new Promise<boolean>((resolve, reject) => {
      this.#ensures.set(req, {
        runnerId: connection.runnerId,
        options,
        done: ({ booted, error }) => (error === undefined ? resolve(booted) : reject(new Error(error))),
      });
      this.#send(connection, {
        type: 'ensure',
        req,
        thread_id: threadId,
        workspace_dir: options.workspaceDir,
        env: options.env,
        size: options.size,
        entrypoint: options.entrypoint,
        lifecycle: options.lifecycle,
        shared_dir: options.sharedDir,
      });
    });
    this.#sandboxes.set(threadId, connection.runnerId);
    if (booted) this.#bootListeners.set(threadId, options.onStatus);
    return booted;
  }

  runTurn(threadId: string, command: Parameters<SandboxHost['runTurn']>[1], onEvent: TurnEventSink) {
    const connection = this.#placed(threadId);
    if (!connection) return Promise.resolve(runnerLost('the thread has no running sandbox'));
    const result = this.#track(command.turn_id, threadId, connection.runnerId, 0, onEvent);
    this.#send(connection, {
      type: 'turn',
      thread_id: threadId,
      command: { ...command, messages: command.messages as ModelMessage[] },
    });
    return result;
  }

  attach(threadId: string, turnId: string, fromIndex: number, onEvent: TurnEventSink): Promise<TurnResult> {
    const adoptable = this.#adoptable.get(turnId);
    this.#adoptable.delete(turnId);
    const connection = adoptable && this.#connections.get(adoptable.runnerId);
    if (!connection || !this.#serves(connection, threadId))
      return Promise.resolve(runnerLost('the runner holding the turn disconnected'));
    const result = this.#track(turnId, threadId, connection.runnerId, fromIndex, onEvent);
    this.#send(connection, { type: 'attach', turn_id: turnId, from_index: fromIndex });
    return result;
  }

  release(turnId: string): void {
    const turn = this.#turns.get(turnId);
    if (!turn) return;
    this.#turns.delete(turnId);
    clearTimeout(turn.lost);
    const connection = this.#connections.get(turn.runnerId);
    if (connection) this.#send(connection, { type: 'ack', turn_id: turnId, index: turn.next - 1 });
  }

  interruptOrphan(threadId: string): void {
    const connection = this.#placed(threadId);
    if (connection) this.#send(connection, { type: 'interrupt-orphan', thread_id: threadId });
  }

  interrupt(threadId: string, turnId: string): void {
    const turn = this.#turns.get(turnId);
    if (turn) turn.interrupted = true;
    const connection = turn ? this.#connections.get(turn.runnerId) : this.#placed(threadId);
    if (connection) this.#send(connection, { type: 'interrupt', thread_id: threadId, turn_id: turnId });
  }

  steer(threadId: string, turnId: string, messages: { id: string; content: string }[]): Promise<boolean> {
    const turn = this.#turns.get(turnId);
    const connection = turn && this.#connections.get(turn.runnerId);
    if (!connection) return Promise.resolve(false);
    const req = ++this.#req;
    return new Promise((resolve) => {
      this.#steers.set(req, { runnerId: connection.runnerId, resolve });
      this.#send(connection, { type: 'steer', req, thread_id: threadId, turn_id: turnId, messages });
    });
  }

  exec<E extends SandboxExec>(threadId: string, request: E): Promise<SandboxExecResult<E>> {
    const connection = this.#placed(threadId);
    if (!connection) return Promise.reject(new Error('the thread has no running sandbox'));
    const req = ++this.#req;
    return new Promise((resolve, reject) => {
      this.#execs.set(req, {
        runnerId: connection.runnerId,
        op: request.op,
        resolve: resolve as (result: SandboxExecResult) => void,
        reject,
      });
      this.#send(connection, { type: 'exec', req, thread_id: threadId, request });
    });
  }

  #track(turnId: string, threadId: string, runnerId: string, next: number, onEvent: TurnEventSink) {
    return new Promise<TurnResult>((resolve) => {
      this.#turns.set(turnId, {
        threadId,
        runnerId,
        next,
        onEvent,
        chain: Promise.resolve(),
        interrupted: false,
        resolve,
      });
    });
  }

  async #hello(connection: Connection, hello: Extract<RunnerMessage, { type: 'hello' }>): Promise<void> {
    const previous = this.#connections.get(connection.runnerId);
    if (previous) {
      this.#gone(previous);
      previous.socket.close(1000, 'replaced by a newer connection');
    }
    this.#connections.set(connection.runnerId, connection);
    const listed = new Set(hello.sandboxes);
    for (const [threadId, runnerId] of this.#sandboxes) {
      if (runnerId !== connection.runnerId) continue;
      this.#sandboxes.delete(threadId);
      if (listed.has(threadId)) continue;
      // Gone while the runner was away: its boot hears it as it would have heard `sandbox.gone`.
      const listener = this.#bootListeners.get(threadId);
      this.#bootListeners.delete(threadId);
      listener?.({ status: 'exited', detail: 'gone while its runner was disconnected' });
    }
    for (const threadId of listed) this.#sandboxes.set(threadId, connection.runnerId);
    this.#options.logger.info(
      { runner_id: connection.runnerId, sandboxes: hello.sandboxes.length, turns: hello.turns.length },
      'runner connected',
    );
    const held = new Set(hello.turns.map((t) => t.turn_id));
    for (const [turnId, turn] of this.#turns) {
      if (turn.runnerId !== connection.runnerId) continue;
      if (held.has(turnId)) {
        // The same runner came back: pick up where this server's store left off.
        clearTimeout(turn.lost);
        turn.lost = undefined;
        this.#send(connection, { type: 'attach', turn_id: turnId, from_index: turn.next });
        if (turn.interrupted)
          this.#send(connection, { type: 'interrupt', thread_id: turn.threadId, turn_id: turnId });
      } else {
        this.#end(turnId, runnerLost('the runner restarted and no longer has the turn'));
      }
    }
    for (const resolve of this.#waiting.splice(0)) resolve();
    for (const { turn_id: turnId, thread_id: threadId } of hello.turns) {
      if (this.#turns.has(turnId)) continue;
      this.#adoptable.set(turnId, { threadId, runnerId: connection.runnerId });
      const adopt = { turnId, threadId, runnerId: connection.runnerId, agentId: connection.agentId };
      const adopted = await this.adopt(adopt).catch((error: unknown) => {
        this.#options.logger.error({ err: error, turn_id: turnId }, 'adopting a turn failed');
        return false;
      });
      if (!adopted) {
        this.#adoptable.delete(turnId);
        this.#send(connection, { type: 'abandon', turn_id: turnId });
      }
    }
    await this.reconcile(connection.runnerId, held).catch((error: unknown) =>
      this.#options.logger.error(
        { err: error, runner_id: connection.runnerId },
        'settling lost turns failed',
      ),
    );
  }

  #route(connection: Connection, message: RunnerMessage, refuse: (reason: string) => void): void {
    switch (message.type) {
      // Answers count only from the runner the request went to (a self-hosted runner could guess numbers).
      case 'ensure.status':
        this.#ensureOf(connection, message.req)?.options.onStatus(message.status);
        return;
      case 'ensure.output':
        this.#ensureOf(connection, message.req)?.options.onEntrypointOutput(
          message.stream,
          message.text,
          message.exit_code,
        );
        return;
      case 'ensure.done': {
        const ensure = this.#ensureOf(connection, message.req);
        if (!ensure) return;
        this.#ensures.delete(message.req);
        ensure.done(message);
        return;
      }
      case 'sandbox.gone': {
        if (this.#sandboxes.get(message.thread_id) !== connection.runnerId) return;
        this.#sandboxes.delete(message.thread_id);
        const listener = this.#bootListeners.get(message.thread_id);
        this.#bootListeners.delete(message.thread_id);
        listener?.(message.status);
        return;
      }
      case 'steer.result': {
        const steer = this.#steers.get(message.req);
        if (steer?.runnerId !== connection.runnerId) return;
        this.#steers.delete(message.req);
        steer.resolve(message.taken);
        return;
      }
      case 'exec.result': {
        const exec = this.#execs.get(message.req);
        if (exec?.runnerId !== connection.runnerId) return;
        this.#execs.delete(message.req);
        if (message.result === undefined) {
          exec.reject(new Error(message.error ?? 'the runner did not run the code'));
          return;
        }
        const result = sandboxExecResultSchemas[exec.op].safeParse(message.result);
        if (result.success) exec.resolve(result.data);
        else {
          exec.reject(new Error('the runner answered the code run with a malformed result'));
          refuse(`exec.result: not a result of ${exec.op}`);
        }
        return;
      }
      case 'turn.event':
      case 'turn.result': {
        const turn = this.#turns.get(message.turn_id);
        // Below `next`: a replay of what this server has; above it cannot happen on an ordered socket.
        if (!turn || turn.runnerId !== connection.runnerId || message.index !== turn.next) return;
        turn.next++;
        const { index } = message;
        if (message.type === 'turn.event') {
          const { event } = message;
          turn.chain = turn.chain
            .then(async () => {
              await turn.onEvent(event, index);
              const current = this.#connections.get(turn.runnerId);
              if (current) this.#send(current, { type: 'ack', turn_id: message.turn_id, index });
            })
            .catch((error: unknown) => {
              // Not stored (the store refused what the runner sent, or is down): the turn cannot
              // go on in order, so it ends here, and the runner's later frames of it are dropped.
              this.#options.logger.error(
                { err: error, runner_id: connection.runnerId, turn_id: message.turn_id, index },
                'storing a runner turn event failed',
              );
              this.#end(message.turn_id, runnerLost('an event of the turn could not be stored'));
            });
        } else {
          const { result } = message;
          void turn.chain.then(() => turn.resolve(result));
        }
        return;
      }
      case 'hello':
        return;
    }
  }

  /**
   * A runner disconnected: its boots, steering and code runs fail now; its turns wait for it (or a
   * restart) a while.
   */
  #gone(connection: Connection): void {
    this.#connections.delete(connection.runnerId);
    this.#options.logger.warn({ runner_id: connection.runnerId }, 'runner disconnected');
    for (const [req, ensure] of this.#ensures) {
      if (ensure.runnerId !== connection.runnerId) continue;
      this.#ensures.delete(req);
      ensure.done({ booted: false, error: 'the runner disconnected while the sandbox booted' });
    }
    for (const [req, steer] of this.#steers) {
      if (steer.runnerId !== connection.runnerId) continue;
      this.#steers.delete(req);
      steer.resolve(false);
    }
    for (const [req, exec] of this.#execs) {
      if (exec.runnerId !== connection.runnerId) continue;
      this.#execs.delete(req);
      exec.reject(new Error('the runner disconnected during the code run'));
    }
    for (const [turnId, turn] of this.#turns) {
      if (turn.runnerId !== connection.runnerId || turn.lost) continue;
      turn.lost = setTimeout(
        () => this.#end(turnId, runnerLost('the runner did not come back')),
        this.#options.lostAfterMs,
      );
      turn.lost.unref();
    }
  }

  #end(turnId: string, result: TurnResult): void {
    const turn = this.#turns.get(turnId);
    if (!turn) return;
    this.#turns.delete(turnId);
    clearTimeout(turn.lost);
    void turn.chain.then(() => turn.resolve(result));
  }

  #ensureOf(connection: Connection, req: number) {
    const ensure = this.#ensures.get(req);
    return ensure?.runnerId === connection.runnerId ? ensure : undefined;
  }

  /** Whether the runner may host the thread's sandbox: a self-hosted one only its agent's. */
  #serves(connection: Connection, threadId: string): boolean {
    return connection.agentId === undefined || connection.agentId === this.#agents.get(threadId);
  }

  /** The connected runner the thread's sandbox runs on, if it may. */
  #placed(threadId: string): Connection | undefined {
    const connection = this.#connections.get(this.#sandboxes.get(threadId) ?? '');
    return connection && this.#serves(connection, threadId) ? connection : undefined;
  }

  /** A connected runner that may host the thread's sandbox. */
  #serving(threadId: string): Connection | undefined {
    for (const connection of this.#connections.values())
      if (this.#serves(connection, threadId)) return connection;
    return undefined;
  }

  async #pickRunner(threadId: string): Promise<Connection> {
    const deadline = Date.now() + (this.#options.waitForRunnerMs ?? 30_000);
    for (;;) {
      const connection = this.#placed(threadId) ?? this.#serving(threadId);
      if (connection) return connection;
      const left = deadline - Date.now();
      if (left <= 0) throw this.#unavailable(threadId);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiting.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  #unavailable(threadId: string): Error {
    if (this.#options.selfHosted) {
      const agentId = this.#agents.get(threadId) ?? 'unknown';
      return new SandboxUnavailableError(
        `no self-hosted runner is connected for agent ${agentId}: start \`paddock runner\` on your machine with a publish token of that agent (PADDOCK_RUNNER_TOKEN)`,
      );
    }
    return new Error('no sandbox runner is connected to this server');
  }

  #send(connection: Connection, message: ServerMessage): void {
    connection.socket.send(JSON.stringify(message));
  }
}

function runnerLost(message: string): TurnResult {
  return runnerError('runner_lost', message, true);
}

function runnerError(code: string, message: string, retryable = false): TurnResult {
  return { stopReason: 'error', messages: [], lastAssistantText: '', error: { code, message, retryable } };
}
