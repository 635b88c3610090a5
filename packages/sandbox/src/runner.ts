import { randomBytes } from 'node:crypto';
import { access, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type {
  DraftEvent,
  SandboxExec,
  SandboxExecResult,
  SteeredMessage,
  TurnCommand,
  TurnResult,
} from '@paddock/protocol';
import type { ModelMessage } from 'ai';
import { type ApiProxy, type ApiTarget, startApiProxy } from './api-proxy.ts';
import type { SandboxProcess, SandboxProvider, SandboxSize } from './provider.ts';
import { type SandboxLifecycle, SandboxTimers } from './sandbox-timers.ts';
import { type StandbyOptions, StandbyPool } from './standby-pool.ts';
import {
  type EntrypointOutputListener,
  exitAccount,
  type SandboxStatus,
  sandboxExited,
  ThreadSandbox,
} from './thread-sandbox.ts';
import { defaultUidRange } from './workspaces/uid-claims.ts';
import { Workspaces } from './workspaces/workspaces.ts';

export type RunnerLog = (level: 'info' | 'warn' | 'error', message: string) => void;

export interface RunnerOptions {
  provider: SandboxProvider;
  /** Host-side state: a directory per thread (the entrypoint marker) and the API proxy socket. */
  stateDir: string;
  /** The Paddock server, which the API proxy forwards every sandbox connection to. */
  apiTarget: ApiTarget;
  log?: RunnerLog;
  /**
   * How long a sandbox's connection waits for an unreachable server (a detached runner's server may
   * be restarting). Default: fail at once.
   */
  apiConnectRetryMs?: number;
  /** How long a stopped supervisor gets to exit on its own before it is killed. */
  stopGraceMs?: number;
  /**
   * Sandboxes kept booted, with the harness loaded, for new threads of that size to take over.
   * Their workspaces live under `<stateDir>/standby`, which must be on the filesystem of the thread
   * workspaces. Default one of size S; `count: 0` turns them off.
   */
  standby?: StandbyOptions;
  /**
   * Makes the thread workspaces (and the standbys'), each owned by a uid of its own, with its quota.
   * Shared with whatever else makes workspaces on this data dir (the server's uploads). Default: one
   * of its own under `<stateDir>/workspace-state`, with the default uid range as root and no quotas.
   */
  workspaces?: Workspaces;
}

export interface EnsureOptions {
  /** The thread's workspace on the host; need not exist yet. */
  workspaceDir: string;
  /**
   * Agent secrets, PADDOCK_TOKEN, PADDOCK_API_URL (as the host sees it): what everything in the
   * sandbox runs with, completed by the provider. Read at boot only; a running sandbox keeps its env.
   */
  env: Record<string, string>;
  size: SandboxSize;
  /** Runs once per thread, on its first boot; later boots skip it. */
  entrypoint?: string;
  onEntrypointOutput?: EntrypointOutputListener;
  onStatus?: (status: SandboxStatus) => void;
  /** Sleep while idle, or a lifetime (the providers that have them); read at boot. */
  lifecycle?: SandboxLifecycle;
  /** A host directory to show at `/shared` (the team's shared folder), where the provider can. */
  sharedDir?: string;
}

const entrypointMarker = 'entrypoint-ran';
const threadIdPattern = /^[A-Za-z0-9_-]{1,100}$/;
/** Directories of the state dir that are not a thread's. */
const reservedNames = new Set(['standby', 'api-proxy']);
const defaultStandby: StandbyOptions = { size: 'S', count: 1 };

/**
 * The sandbox host: one sandbox per thread, booted on demand (or taken over from the standby pool)
 * and kept across turns, with one API proxy shared by all of them.
 */
export class Runner {
  readonly #options: RunnerOptions;
  readonly #log: RunnerLog;
  readonly #threads = new Map<string, ThreadSandbox>();
  readonly #timers = new Map<string, SandboxTimers>();
  /** Threads whose sandbox reached the end of its lifetime: they never boot again here. */
  readonly #expired = new Set<string>();
  readonly #booting = new Map<string, Promise<void>>();
  readonly #standbys: StandbyPool | undefined;
  readonly #workspaces: Workspaces;
  /** The runner made its own `Workspaces`, so it closes them. */
  readonly #ownsWorkspaces: boolean;
  #proxy: Promise<ApiProxy> | undefined;
  #closed = false;

  /** Starts booting the standby sandboxes in the background. */
  constructor(options: RunnerOptions) {
    this.#options = options;
    this.#log = options.log ?? (() => {});
    this.#ownsWorkspaces = options.workspaces === undefined;
    this.#workspaces =
      options.workspaces ??
      new Workspaces({
        stateDir: join(options.stateDir, 'workspace-state'),
        uids: process.getuid?.() === 0 ? defaultUidRange : undefined,
      });
    const standby = options.standby ?? defaultStandby;
    if (standby.count > 0) {
      this.#standbys = new StandbyPool({
        ...standby,
        dir: join(options.stateDir, 'standby'),
        workspaces: this.#workspaces,
        boot: async (id, workspaceDir, uid) =>
          options.provider.create({
            id,
            workspaceDir,
            uid,
            size: standby.size,
            apiSocket: (await this.#apiProxy()).socketPath,
            onStderr: (text) => this.#log('warn', `sandbox ${id} (stderr): ${text.trimEnd()}`),
          }),
        log: this.#log,
      });
      this.#standbys.fill();
    }
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
    return !thread ? 'absent' : thread.frozen ? 'sleeping' : 'running';
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
    return this.#standbys?.whenWarm() ?? Promise.resolve();
  }

  /** Runs one turn in the thread's sandbox (call `ensure` first); never rejects for the sandbox's sake. */
  runTurn(
    threadId: string,
    command: TurnCommand,
    onEvent: (event: DraftEvent) => void,
  ): Promise<TurnResult<ModelMessage>> {
    const thread = this.#threads.get(threadId);
    if (!thread) return Promise.resolve(sandboxExited('the thread has no running sandbox'));
    const timers = this.#timers.get(threadId);
    timers?.busy();
    // Sent at once unless the sandbox sleeps: an interrupt or a steered message sent right after
    // this call must find the turn registered.
    const result = thread.frozen
      ? this.#wake(threadId, thread).then(() => thread.runTurn(command, onEvent))
      : thread.runTurn(command, onEvent);
    return result.finally(() => {
      if (this.#threads.get(threadId) === thread && thread.turnId === undefined) timers?.idle();
    });
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
    const thread = this.#threads.get(threadId);
    if (thread?.turnId === turnId) thread.sandbox.send({ type: 'interrupt', turn_id: turnId });
  }

  /**
   * Shuts the thread's sandbox down; the next `ensure` boots a fresh one (without the entrypoint).
   * A turn it cuts off ends as cancelled, or with `cutOff` as its error (the lifetime ended).
   */
  async stop(
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
    thread.sandbox.send({ type: 'shutdown' });
    const grace = sleep(this.#options.stopGraceMs ?? 2_000, undefined, { ref: false });
    await Promise.race([thread.sandbox.exited, grace]);
    await thread.sandbox.destroy();
    thread.onStatus?.(why ? { status: 'stopped', detail: why.detail } : { status: 'stopped' });
  }

  /** Destroys every sandbox (standbys included), closes the API proxy and the provider. */
  async shutdown(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#booting.values()].map((boot) => boot.catch(() => {})));
    await this.#standbys?.close();
    await Promise.all([...this.#threads.keys()].map((threadId) => this.stop(threadId)));
    const proxy = this.#proxy;
    this.#proxy = undefined;
    await (await proxy?.catch(() => undefined))?.close();
    await this.#options.provider.close();
    if (this.#ownsWorkspaces) await this.#workspaces.close();
  }

  async #boot(threadId: string, options: EnsureOptions): Promise<void> {
    if (!threadIdPattern.test(threadId) || reservedNames.has(threadId)) {
      throw new Error(`invalid thread id for a sandbox: ${threadId}`);
    }
    const { provider } = this.#options;
    const threadDir = join(this.#options.stateDir, threadId);
    await mkdir(threadDir, { recursive: true });
    options.onStatus?.({ status: 'starting', isolation: provider.isolation });
    let sandbox = await this.#standbys?.claim(options.size, options.workspaceDir);
    const claimed = sandbox !== undefined;
    if (sandbox) this.#log('info', `thread ${threadId} took over standby sandbox ${sandbox.id}`);
    else sandbox = await this.#bootFresh(threadId, options);
    if (options.sharedDir) {
      try {
        await sandbox.attachShared?.(options.sharedDir);
      } catch (error) {
        await sandbox.destroy();
        throw error;
      }
    }
    const thread = new ThreadSandbox(sandbox, this.#log, options.onStatus);
    thread.configure(provider.sandboxEnv(options.workspaceDir, options.env));
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

    try {
      const marker = join(threadDir, entrypointMarker);
      if (options.entrypoint !== undefined && !(await exists(marker))) {
        const exitCode = await thread.runEntrypoint(options.entrypoint, options.onEntrypointOutput);
        await writeFile(marker, `${JSON.stringify({ exit_code: exitCode, at: new Date().toISOString() })}\n`);
        options.onEntrypointOutput?.('status', `entrypoint exited with code ${exitCode}\n`, exitCode);
      }
    } catch (error) {
      await sandbox.destroy();
      throw error;
    }
    if (this.#closed || thread.gone) {
      await sandbox.destroy();
      throw new Error(
        this.#closed ? 'runner is shut down' : `sandbox for thread ${threadId} exited while booting`,
      );
    }
    this.#threads.set(threadId, thread);
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
    if (this.#threads.get(threadId) !== thread || thread.turnId !== undefined || thread.frozen) return;
    if (await thread.sandbox.setFrozen?.(true)) {
      thread.frozen = true;
      thread.onStatus?.({ status: 'sleeping', detail: 'frozen while idle' });
    }
  }

  /** Thaws a sleeping sandbox before anything is asked of it. */
  async #wake(threadId: string, thread: ThreadSandbox): Promise<void> {
    if (!thread.frozen) return;
    await thread.sandbox.setFrozen?.(false);
    thread.frozen = false;
    thread.onStatus?.({ status: 'running', detail: 'woke from sleep' });
    this.#timers.get(threadId)?.idle();
  }

  async #retire(threadId: string, reason: 'idle' | 'lifetime'): Promise<void> {
    if (reason === 'idle')
      return this.stop(threadId, { detail: 'stopped while idle; the workspace is kept' });
    this.#expired.add(threadId);
    const message = 'the sandbox reached the end of its lifetime';
    await this.stop(threadId, { detail: message, cutOff: { code: 'sandbox_expired', message } });
  }

  async #bootFresh(threadId: string, options: EnsureOptions): Promise<SandboxProcess> {
    const { uid } = await this.#workspaces.ensure(options.workspaceDir, options.size);
    const proxy = await this.#apiProxy();
    return this.#options.provider.create({
      id: `${threadId}-${randomBytes(4).toString('hex')}`,
      workspaceDir: options.workspaceDir,
      uid,
      size: options.size,
      apiSocket: proxy.socketPath,
      onStderr: (text) => this.#log('warn', `sandbox for thread ${threadId} (stderr): ${text.trimEnd()}`),
    });
  }

  #apiProxy(): Promise<ApiProxy> {
    this.#proxy ??= startApiProxy({
      socketPath: join(this.#options.stateDir, 'api-proxy', 'api.sock'),
      target: this.#options.apiTarget,
      connectRetryMs: this.#options.apiConnectRetryMs,
    });
    return this.#proxy;
  }
}

function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}
