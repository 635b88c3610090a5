import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { access, mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SandboxLifecycle } from '@paddock/protocol';
import { type ApiProxy, type ApiTarget, startApiProxy } from './api-proxy.ts';
import type { EgressRecord } from './egress/egress-proxy.ts';
import type { NetworkPolicy } from './egress/network-policy.ts';
import { type EgressSettings, egressProxyEnv, SandboxEgress } from './egress/sandbox-egress.ts';
import type { SandboxProcess, SandboxProvider, SandboxSize, SandboxSpec, SkillMount } from './provider.ts';
import { sandboxPaths } from './sandbox-paths.ts';
import { copySkillFolders } from './skill-copies.ts';
import { type StandbyOptions, StandbyPool } from './standby-pool.ts';
import { type EntrypointOutputListener, type SandboxStatus, ThreadSandbox } from './thread-sandbox.ts';
import { sandboxHands } from './turns/sandbox-hands.ts';
import { type ThreadModels, threadContext } from './turns/thread-context.ts';
import { defaultUidRange } from './workspaces/uid-claims.ts';
import { Workspaces } from './workspaces/workspaces.ts';

export interface SandboxBooterOptions {
  provider: SandboxProvider;
  /** Host-side state: a directory per thread (the entrypoint marker) and the API proxy socket. */
  stateDir: string;
  /** The Paddock server, which the API proxy forwards every sandbox connection to. */
  apiTarget: ApiTarget;
  /**
   * How long a sandbox's connection waits for an unreachable server (a detached runner's server may
   * be restarting). Default: fail at once.
   */
  apiConnectRetryMs?: number;
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
  /**
   * What every sandbox's egress proxy decides by besides its thread's policy (providers with
   * `egress`). Without it sandboxes reach nothing but the Paddock API.
   */
  egress?: EgressSettings;
  /**
   * The models Paddock's own loops call, in this process: the server's runner gives its model
   * router, metered to the thread. Without it (a runner of its own) they call the gateway over HTTP,
   * at `apiTarget`, with the thread's token.
   */
  models?: ThreadModels;
}

export type { ThreadModels };

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
  /**
   * The thread's skills (folders on the host, never written by a sandbox), shown read-only at
   * `/skills/<slug>` where the provider can, with PADDOCK_SKILLS_DIR=/skills.
   */
  skills?: SkillMount[];
  /** What the sandbox may reach through its egress proxy (issue 15). Default `registries`. */
  network?: NetworkPolicy;
  /** Each connection the sandbox made through its egress proxy, when it ends. */
  onNetwork?: (record: EgressRecord) => void;
}

const entrypointMarker = 'entrypoint-ran';
/** Debian's bundle of the host's certificate authorities, which sandboxes see at the same path. */
const caBundle = '/etc/ssl/certs/ca-certificates.crt';
const threadIdPattern = /^[A-Za-z0-9_-]{1,100}$/;
/** Directories of the state dir that are not a thread's. */
const reservedNames = new Set(['standby', 'api-proxy', 'egress']);
const defaultStandby: StandbyOptions = { size: 'S', count: 1 };

/**
 * Where a runner's sandboxes come from: the provider, the standby pool, the thread workspaces, and
 * one API proxy shared by all of them. It boots a thread's sandbox up to the end of its entrypoint;
 * what runs where is the runner's.
 */
export class SandboxBooter {
  readonly #options: SandboxBooterOptions;
  readonly #log: (level: 'info' | 'warn' | 'error', message: string) => void;
  readonly #standbys: StandbyPool | undefined;
  readonly #workspaces: Workspaces;
  /** The booter made its own `Workspaces`, so it closes them. */
  readonly #ownsWorkspaces: boolean;
  #proxy: Promise<ApiProxy> | undefined;
  /** Each sandbox's own egress proxy, while it lives. */
  readonly #egress = new WeakMap<SandboxProcess, SandboxEgress>();
  /** The sockets a previous runner on this state dir left, removed before the first is made. */
  #egressLeftovers: Promise<void> | undefined;

  /** Starts booting the standby sandboxes in the background. */
  constructor(
    options: SandboxBooterOptions,
    log: (level: 'info' | 'warn' | 'error', message: string) => void,
  ) {
    this.#options = options;
    this.#log = log;
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
        boot: (id, workspaceDir, uid) =>
          this.#create({
            id,
            workspaceDir,
            uid,
            size: standby.size,
            onStderr: (text) => this.#log('warn', `sandbox ${id} (stderr): ${text.trimEnd()}`),
          }),
        agentEnv: (workspaceDir) =>
          options.provider.sandboxEnv(workspaceDir, this.#egressEnv(), standby.size),
        // A standby's programs need its workspace where its thread will see it: not so where it moves.
        hands: (sandbox) =>
          options.provider.kind === 'process'
            ? undefined
            : sandboxHands(sandbox.supervisor, options.provider.nodeDir),
        log: this.#log,
      });
      this.#standbys.fill();
    }
  }

  get provider(): SandboxProvider {
    return this.#options.provider;
  }

  /** Settles once every standby sandbox is booted with the harness loaded (at once without standbys). */
  standbysWarm(): Promise<void> {
    return this.#standbys?.whenWarm() ?? Promise.resolve();
  }

  /**
   * Boots one thread's sandbox: takes a standby of its size over (else boots a fresh one), shows the
   * shared folder, configures it with the thread's environment and runs the entrypoint on the
   * thread's first boot. A sandbox that fails on the way is destroyed. `claimed`: a standby's.
   */
  async boot(threadId: string, options: EnsureOptions): Promise<{ thread: ThreadSandbox; claimed: boolean }> {
    if (!threadIdPattern.test(threadId) || reservedNames.has(threadId)) {
      throw new Error(`invalid thread id for a sandbox: ${threadId}`);
    }
    const { provider } = this.#options;
    const threadDir = join(this.#options.stateDir, threadId);
    await mkdir(threadDir, { recursive: true });
    options.onStatus?.({ status: 'starting', isolation: provider.isolation });
    const skills = options.skills?.length ? options.skills : undefined;
    const mounts = provider.skills === 'bound' ? skills : undefined;
    // Without isolation, a copy of the thread's skills in a folder of its own on the host.
    const skillsDir =
      skills && provider.skills === 'host'
        ? await copySkillFolders(join(threadDir, 'skills'), skills)
        : mounts && sandboxPaths.skills;
    // A standby booted before its thread was known binds no skills: a thread with skills boots its own.
    let sandbox = mounts ? undefined : await this.#standbys?.claim(options.size, options.workspaceDir);
    const claimed = sandbox !== undefined;
    if (sandbox) this.#log('info', `thread ${threadId} took over standby sandbox ${sandbox.id}`);
    else sandbox = await this.#bootFresh(threadId, options, mounts);
    this.#egress.get(sandbox)?.serve(options.network ?? 'registries', options.onNetwork ?? (() => {}));
    // The team's folder is shown while the turn begins: only what acts in the sandbox (a process, a
    // file operation) waits for it, so a reply that runs no tool does not. A failure ends the sandbox.
    const booted = sandbox;
    const shared =
      options.sharedDir && booted.attachShared
        ? booted.attachShared(options.sharedDir).catch(async (error: unknown) => {
            await booted.destroy();
            throw error;
          })
        : undefined;
    shared?.catch(() => {});
    const thread = new ThreadSandbox(sandbox, provider.nodeDir, options.onStatus, shared);
    const env = provider.sandboxEnv(
      options.workspaceDir,
      { ...options.env, ...(skillsDir ? { PADDOCK_SKILLS_DIR: skillsDir } : {}), ...this.#egressEnv() },
      options.size,
    );
    const { apiTarget, models } = this.#options;
    thread.configure(threadContext({ threadId, apiTarget, models, hostEnv: options.env, env }));
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
    return { thread, claimed };
  }

  /** Destroys the standby sandboxes and boots no more. */
  async closeStandbys(): Promise<void> {
    await this.#standbys?.close();
  }

  /** Closes the API proxy and the provider (and the workspaces, when it made them). */
  async close(): Promise<void> {
    const proxy = this.#proxy;
    this.#proxy = undefined;
    await (await proxy?.catch(() => undefined))?.close();
    await this.#options.provider.close();
    if (this.#ownsWorkspaces) await this.#workspaces.close();
  }

  async #bootFresh(threadId: string, options: EnsureOptions, skills?: SkillMount[]): Promise<SandboxProcess> {
    const { uid } = await this.#workspaces.ensure(options.workspaceDir, options.size);
    return this.#create({
      id: `${threadId}-${randomBytes(4).toString('hex')}`,
      workspaceDir: options.workspaceDir,
      uid,
      size: options.size,
      onStderr: (text) => this.#log('warn', `sandbox for thread ${threadId} (stderr): ${text.trimEnd()}`),
      skills,
    });
  }

  /** A sandbox with the API proxy and, where the provider has them, an egress proxy of its own. */
  async #create(spec: Omit<SandboxSpec, 'apiSocket' | 'egressSocket'>): Promise<SandboxProcess> {
    const apiSocket = (await this.#apiProxy()).socketPath;
    const settings = this.#options.provider.egress ? this.#options.egress : undefined;
    // A short name of its own: a unix socket's path has at most 107 bytes.
    const egressDir = join(this.#options.stateDir, 'egress');
    this.#egressLeftovers ??= rm(egressDir, { recursive: true, force: true });
    await this.#egressLeftovers;
    const socketPath = join(egressDir, `${randomBytes(6).toString('hex')}.sock`);
    const egress = settings && (await SandboxEgress.start(socketPath, settings));
    let sandbox: SandboxProcess;
    try {
      sandbox = await this.#options.provider.create({ ...spec, apiSocket, egressSocket: egress?.socketPath });
    } catch (error) {
      await egress?.close();
      throw error;
    }
    if (egress) {
      this.#egress.set(sandbox, egress);
      void sandbox.exited.finally(() => egress.close());
    }
    return sandbox;
  }

  /** What points a sandbox's tools at its egress proxy; nothing where sandboxes have none. */
  #egressEnv(): Record<string, string> {
    if (!this.#options.provider.egress || !this.#options.egress) return {};
    return egressProxyEnv(existsSync(caBundle) ? caBundle : undefined);
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
