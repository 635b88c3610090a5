import { type SandboxBoot, SandboxUnavailableError } from '@paddock/core';
import type { ServerMessage } from '@paddock/sandbox';

/** The WebSocket of a runner's link as the hub uses it (the `ws` library's; a fake in tests). */
export interface RunnerSocket {
  send(data: string): void;
  close(code?: number, reason?: string): void;
  terminate(): void;
  on(event: 'message', listener: (data: unknown) => void): unknown;
  on(event: 'close' | 'error', listener: () => void): unknown;
}

export interface Connection {
  runnerId: string;
  socket: RunnerSocket;
  /** A self-hosted runner's agent: it serves that agent's threads only. */
  agentId?: string;
}

type BootListener = SandboxBoot['onStatus'];
type SandboxStatus = Parameters<BootListener>[0];

/**
 * The connected runners and where the threads' sandboxes run: which runner hosts each sandbox,
 * whose each thread is (a self-hosted runner gets only its own agent's threads), and which boots
 * are under way here.
 */
export class RunnerRegistry {
  readonly #selfHosted: boolean;
  readonly #waitForRunnerMs: number;
  readonly #connections = new Map<string, Connection>();
  /** Thread → the runner its sandbox runs on. */
  readonly #sandboxes = new Map<string, string>();
  /**
   * Thread → the status listener of the boot that made its running sandbox, told when the runner
   * says that sandbox is gone (an idle stop, a crash): core revokes that boot's thread token then.
   */
  readonly #bootListeners = new Map<string, BootListener>();
  /** Thread → its agent (`place`). */
  readonly #agents = new Map<string, string>();
  /** Threads whose sandbox boot (or wait for a runner to boot it on) is under way here. */
  readonly #booting = new Set<string>();
  readonly #bootingOn = new Map<string, string>();
  #waiting: (() => void)[] = [];

  constructor(options: { selfHosted: boolean; waitForRunnerMs: number }) {
    this.#selfHosted = options.selfHosted;
    this.#waitForRunnerMs = options.waitForRunnerMs;
  }

  get(runnerId: string): Connection | undefined {
    return this.#connections.get(runnerId);
  }

  all(): Iterable<Connection> {
    return this.#connections.values();
  }

  /**
   * Takes a runner's connection with the sandboxes it says it runs; its others went while it was
   * away, and their boots hear it as they would have heard `sandbox.gone`.
   */
  connect(connection: Connection, listed: ReadonlySet<string>): void {
    this.#connections.set(connection.runnerId, connection);
    for (const [threadId, runnerId] of this.#sandboxes) {
      if (runnerId !== connection.runnerId) continue;
      this.#sandboxes.delete(threadId);
      if (!listed.has(threadId))
        this.#tellGone(threadId, { status: 'exited', detail: 'gone while its runner was disconnected' });
    }
    for (const threadId of listed) this.#sandboxes.set(threadId, connection.runnerId);
    for (const resolve of this.#waiting.splice(0)) resolve();
  }

  /** Forgets the connection; false when it is not the runner's current one (a replaced one). */
  disconnect(connection: Connection): boolean {
    if (this.#connections.get(connection.runnerId) !== connection) return false;
    this.#connections.delete(connection.runnerId);
    return true;
  }

  /** Sends to the runner's current connection, if it has one. */
  send(runnerId: string, message: ServerMessage): void {
    this.#connections.get(runnerId)?.socket.send(JSON.stringify(message));
  }

  place(threadId: string, agentId: string): void {
    this.#agents.set(threadId, agentId);
  }

  runnerFor(threadId: string): string {
    // A self-hosted runner's claim of a sandbox counts only while it may host it (connected, its agent).
    const claimed = this.#selfHosted ? undefined : this.#sandboxes.get(threadId);
    return this.placed(threadId)?.runnerId ?? claimed ?? this.#serving(threadId)?.runnerId ?? 'unassigned';
  }

  isBooting(threadId: string): boolean {
    return this.#booting.has(threadId);
  }

  /**
   * The sandboxes of the connected runners: one that stays away stops vouching for its own, and they
   * count again once it is back. A self-hosted runner's use none of the deployment's machines.
   */
  liveThreadIds(): string[] {
    if (this.#selfHosted) return [];
    const connected = [...this.#sandboxes].filter(([, runnerId]) => this.#connections.has(runnerId));
    return [...new Set([...connected.map(([threadId]) => threadId), ...this.#booting])];
  }

  /** Counts the thread as booting while `boot` runs. */
  async booting<T>(threadId: string, boot: () => Promise<T>): Promise<T> {
    this.#booting.add(threadId);
    try {
      return await boot();
    } finally {
      this.#booting.delete(threadId);
      this.#bootingOn.delete(threadId);
    }
  }

  /** The runner a boot under way (`booting`) was sent to. */
  bootingOn(threadId: string, runnerId: string): void {
    this.#bootingOn.set(threadId, runnerId);
  }

  /** Whether the thread's sandbox runs, or boots, on this runner: what it may report for. */
  hosts(threadId: string, runnerId: string): boolean {
    return (this.#sandboxes.get(threadId) ?? this.#bootingOn.get(threadId)) === runnerId;
  }

  /** The runner ran `ensure` for the thread; `listener` is told when a sandbox it booted goes. */
  sandboxOn(threadId: string, runnerId: string, listener: BootListener | undefined): void {
    this.#sandboxes.set(threadId, runnerId);
    if (listener) this.#bootListeners.set(threadId, listener);
  }

  /** The runner says the thread's sandbox went; only the runner it ran on may say so. */
  sandboxGone(threadId: string, runnerId: string, status: SandboxStatus): void {
    if (this.#sandboxes.get(threadId) !== runnerId) return;
    this.#sandboxes.delete(threadId);
    this.#tellGone(threadId, status);
  }

  #tellGone(threadId: string, status: SandboxStatus): void {
    const listener = this.#bootListeners.get(threadId);
    this.#bootListeners.delete(threadId);
    listener?.(status);
  }

  /** Whether the runner may host the thread's sandbox: a self-hosted one only its agent's. */
  serves(connection: Connection, threadId: string): boolean {
    return connection.agentId === undefined || connection.agentId === this.#agents.get(threadId);
  }

  /** The connected runner the thread's sandbox runs on, if it may. */
  placed(threadId: string): Connection | undefined {
    const connection = this.#connections.get(this.#sandboxes.get(threadId) ?? '');
    return connection && this.serves(connection, threadId) ? connection : undefined;
  }

  /** The runner to boot the thread's sandbox on, waiting a while for one to connect when none is. */
  async pick(threadId: string): Promise<Connection> {
    const deadline = Date.now() + this.#waitForRunnerMs;
    for (;;) {
      const connection = this.placed(threadId) ?? this.#serving(threadId);
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

  /** A connected runner that may host the thread's sandbox. */
  #serving(threadId: string): Connection | undefined {
    for (const connection of this.#connections.values())
      if (this.serves(connection, threadId)) return connection;
    return undefined;
  }

  #unavailable(threadId: string): Error {
    if (this.#selfHosted) {
      const agentId = this.#agents.get(threadId) ?? 'unknown';
      return new SandboxUnavailableError(
        `no self-hosted runner is connected for agent ${agentId}: start \`paddock runner\` on your machine with a publish token of that agent (PADDOCK_RUNNER_TOKEN)`,
      );
    }
    return new Error('no sandbox runner is connected to this server');
  }
}
