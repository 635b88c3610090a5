import { setTimeout as sleep } from 'node:timers/promises';
import { preloadHarnesses } from '@paddock/harness';
import type {
  DraftEvent,
  HarnessProfile,
  SandboxExec,
  SandboxExecResult,
  SteeredMessage,
  TurnCommand,
  TurnResult,
} from '@paddock/protocol';
import type { ModelMessage } from 'ai';
import { TurnPrograms } from './program-install.ts';
import type { SandboxProvider } from './provider.ts';
import type { RunnerLog, RunnerOptions } from './runner-options.ts';
import { type EnsureOptions, SandboxBooter } from './sandbox-booter.ts';
import { SandboxTimers } from './sandbox-timers.ts';
import { exitAccount, sandboxExited, type ThreadSandbox } from './thread-sandbox.ts';

/**
 * The sandbox host: one sandbox per thread, booted on demand (by its `SandboxBooter`, which takes a
 * standby over when it can) and kept across turns, frozen or stopped while idle as its lifecycle says.
 */
export type { RunnerLog, RunnerOptions };

export class Runner {
  readonly #options: RunnerOptions;
  readonly #log: RunnerLog;
  readonly #threads = new Map<string, ThreadSandbox>();
  readonly #timers = new Map<string, SandboxTimers>();
  /** Threads whose sandbox reached the end of its lifetime: they never boot again here. */
  readonly #expired = new Set<string>();
  readonly #booting = new Map<string, Promise<void>>();
  /** Stops under way (an idle stop may still be in its grace when the runner shuts down). */
  readonly #stopping = new Set<Promise<void>>();
  readonly #booter: SandboxBooter;
  readonly #programs: TurnPrograms;
  #closed = false;

  /** Starts booting the standby sandboxes in the background. */
  constructor(options: RunnerOptions) {
    this.#options = options;
    this.#log = options.log ?? (() => {});
    this.#booter = new SandboxBooter(options, this.#log);
    this.#programs = new TurnPrograms(options.programs, this.#log);
    // The loops run in this process: loaded now, not on the first turn.
    void preloadHarnesses().catch((error: unknown) =>
      this.#log('warn', `harness preload failed: ${String(error)}`),
    );
  }

  get provider(): SandboxProvider {
    return this.#options.provider;
  }

  /**
   * Boots the thread's sandbox unless it runs; concurrent calls share one boot. Answers whether this
   * call booted it (false: it was running or booting already, and keeps the environment of the call
   * that booted it).
   */
  async ensure(threadId: string, options: EnsureOptions): Promise<boolean> {
    if (this.#closed) throw new Error('runner is shut down');
    if (this.#expired.has(threadId))
      throw new Error('the sandbox of this thread reached the end of its lifetime');
    const running = this.#threads.get(threadId);
    if (running) {
      await this.#wake(threadId, running);
      if (running.turnId === undefined) this.#timers.get(threadId)?.idle();
      return false;
    }
    const pending = this.#booting.get(threadId);
    if (pending) return pending.then(() => false);
    const boot = this.#boot(threadId, options).finally(() => this.#booting.delete(threadId));
    this.#booting.set(threadId, boot);
    await boot;
    return true;
  }

  isRunning(threadId: string): boolean {
    return this.#threads.has(threadId);
  }

  /** `sleeping`: booted but frozen while idle; `absent`: not booted (never, or stopped). */
  state(threadId: string): 'running' | 'sleeping' | 'absent' {
    const thread = this.#threads.get(threadId);
    return !thread ? 'absent' : thread.sleeping ? 'sleeping' : 'running';
  }

  /** Whether the thread's sandbox is booting (its entrypoint included). */
  isBooting(threadId: string): boolean {
    return this.#booting.has(threadId);
  }

  /** The turn running in the thread's sandbox, if any. */
  activeTurn(threadId: string): string | undefined {
    return this.#threads.get(threadId)?.turnId;
  }

  /** Threads whose sandbox runs here. */
  threadIds(): string[] {
    return [...this.#threads.keys()];
  }

  /** Threads whose sandbox runs or boots here. */
  liveThreadIds(): string[] {
    return [...new Set([...this.#threads.keys(), ...this.#booting.keys()])];
  }

  /** Settles once every standby sandbox is booted with the harness loaded (at once without standbys). */
  standbysWarm(): Promise<void> {
    return this.#booter.standbysWarm();
  }

  /** Runs one turn in the thread's sandbox (call `ensure` first); never rejects for the sandbox's sake. */
  runTurn(
    threadId: string,
    command: TurnCommand,
    onEvent: (event: DraftEvent) => void,
  ): Promise<TurnResult<ModelMessage>> {
    const thread = this.#threads.get(threadId);
    if (!thread) return Promise.resolve(sandboxExited('the thread has no running sandbox'));
    const profile = command.harness_profile;
    if (this.#programs.needed(profile)) return this.#installThenRun(threadId, command, profile, onEvent);
    return this.#runInSandbox(threadId, thread, command, onEvent);
  }

  #runInSandbox(
    threadId: string,
    thread: ThreadSandbox,
    command: TurnCommand,
    onEvent: (event: DraftEvent) => void,
  ): Promise<TurnResult<ModelMessage>> {
    const timers = this.#timers.get(threadId);
    timers?.busy();
    // Sent at once unless the sandbox sleeps: an interrupt or a steered message sent right after
    // this call must find the turn registered.
    const result = thread.sleeping
      ? this.#wake(threadId, thread).then(() => thread.runTurn(command, onEvent))
      : thread.runTurn(command, onEvent);
    return result.finally(() => {
      if (this.#threads.get(threadId) === thread && thread.turnId === undefined) timers?.idle();
    });
  }

  /**
   * The first turn that needs a program on this runner installs it (concurrent turns share one
   * install), its progress on the thread as `harness.install` events; the sandbox sees the cache
   * read-only, so nothing runs there until the program is in place.
   */
  async #installThenRun(
    threadId: string,
    command: TurnCommand,
    profile: HarnessProfile,
    onEvent: (event: DraftEvent) => void,
  ): Promise<TurnResult<ModelMessage>> {
    // The install may outlast the idle timers: the sandbox must not sleep or stop meanwhile.
    this.#timers.get(threadId)?.busy();
    const ended = await this.#programs.install(threadId, command, profile, onEvent).finally(() => {
      if (this.#threads.get(threadId)?.turnId === undefined) this.#timers.get(threadId)?.idle();
    });
    if (ended) return ended;
    const thread = this.#threads.get(threadId);
    if (!thread) return sandboxExited('the sandbox exited while its program was installed');
    return this.#runInSandbox(threadId, thread, command, onEvent);
  }

  /** Offers messages to the thread's running turn (native steering); false when it did not take them. */
  steer(threadId: string, turnId: string, messages: SteeredMessage[]): Promise<boolean> {
    const thread = this.#threads.get(threadId);
    if (!thread) return Promise.resolve(false);
    return this.#wake(threadId, thread).then(() => thread.steer(turnId, messages));
  }

  /** Runs code (or probes the languages) in the thread's running sandbox, beside any turn. */
  exec<E extends SandboxExec>(threadId: string, request: E): Promise<SandboxExecResult<E>> {
    const thread = this.#threads.get(threadId);
    if (!thread) return Promise.reject(new Error('the thread has no running sandbox'));
    const timers = this.#timers.get(threadId);
    timers?.busy();
    return this.#wake(threadId, thread)
      .then(() => thread.exec(request))
      .finally(() => {
        if (this.#threads.get(threadId) === thread && thread.turnId === undefined) timers?.idle();
      });
  }

  interrupt(threadId: string, turnId: string): void {
    this.#programs.interrupt(threadId, turnId);
    this.#threads.get(threadId)?.interrupt(turnId);
  }

  /**
   * Shuts the thread's sandbox down; the next `ensure` boots a fresh one (without the entrypoint).
   * A turn it cuts off ends as cancelled, or with `cutOff` as its error (the lifetime ended).
   */
  async stop(
    threadId: string,
    why?: { detail: string; cutOff?: { code: string; message: string } },
  ): Promise<void> {
    const stopping = this.#stop(threadId, why);
    this.#stopping.add(stopping);
    try {
      await stopping;
    } finally {
      this.#stopping.delete(stopping);
    }
  }

  async #stop(
    threadId: string,
    why?: { detail: string; cutOff?: { code: string; message: string } },
  ): Promise<void> {
    await this.#booting.get(threadId)?.catch(() => {});
    const thread = this.#threads.get(threadId);
    if (!thread) return;
    this.#threads.delete(threadId);
    this.#timers.get(threadId)?.clear();
    this.#timers.delete(threadId);
    thread.stopping = why?.cutOff ?? true;
    // The turn running there ends now, as the stop says (its harness is in this process).
    if (thread.turnId !== undefined) thread.interrupt(thread.turnId);
    // A frozen supervisor cannot read the shutdown: thawed, it ends its programs in its grace.
    await thread.thawToStop();
    await thread.close();
    thread.sandbox.supervisor.shutdown();
    const grace = sleep(this.#options.stopGraceMs ?? 2_000, undefined, { ref: false });
    await Promise.race([thread.sandbox.exited, grace]);
    await thread.sandbox.destroy();
    thread.onStatus?.(why ? { status: 'stopped', detail: why.detail } : { status: 'stopped' });
  }

  /** Destroys every sandbox (standbys included), closes the API proxy and the provider. */
  async shutdown(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#booting.values()].map((boot) => boot.catch(() => {})));
    await this.#booter.closeStandbys();
    await Promise.all([...this.#threads.keys()].map((threadId) => this.stop(threadId)));
    await Promise.all(this.#stopping);
    await this.#booter.close();
  }

  async #boot(threadId: string, options: EnsureOptions): Promise<void> {
    const { provider } = this.#options;
    const { thread, claimed } = await this.#booter.boot(threadId, options);
    const { sandbox } = thread;
    if (this.#closed || thread.gone) {
      await sandbox.destroy();
      throw new Error(
        this.#closed ? 'runner is shut down' : `sandbox for thread ${threadId} exited while booting`,
      );
    }
    this.#threads.set(threadId, thread);
    void sandbox.exited.then((exit) => {
      if (this.#threads.get(threadId) !== thread) return;
      this.#threads.delete(threadId);
      const how = exitAccount(exit);
      this.#log(
        exit.protocolError === undefined ? 'warn' : 'error',
        `sandbox for thread ${threadId} exited unexpectedly (${how})`,
      );
      options.onStatus?.({ status: 'exited', detail: how });
      void sandbox.destroy();
    });
    if (options.lifecycle) {
      const timers = new SandboxTimers(options.lifecycle, {
        freeze: () => void this.#freeze(threadId, thread),
        stop: (reason) => void this.#retire(threadId, reason),
      });
      this.#timers.set(threadId, timers);
      timers.idle();
    }
    options.onStatus?.({
      status: 'running',
      isolation: provider.isolation,
      detail: claimed ? 'took over a standby sandbox' : 'booted a fresh sandbox',
    });
  }

  async #freeze(threadId: string, thread: ThreadSandbox): Promise<void> {
    if (this.#threads.get(threadId) === thread) await thread.fallAsleep();
  }

  /** Thaws a sleeping sandbox before anything is asked of it; its idle timers start again. */
  async #wake(threadId: string, thread: ThreadSandbox): Promise<void> {
    if (await thread.wake()) this.#timers.get(threadId)?.idle();
  }

  async #retire(threadId: string, reason: 'idle' | 'lifetime'): Promise<void> {
    if (reason === 'idle')
      return this.stop(threadId, { detail: 'stopped while idle; the workspace is kept' });
    this.#expired.add(threadId);
    const message = 'the sandbox reached the end of its lifetime';
    await this.stop(threadId, { detail: message, cutOff: { code: 'sandbox_expired', message } });
  }
}
