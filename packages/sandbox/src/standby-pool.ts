import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SandboxHands } from '@paddock/harness';
import type { HarnessProfile } from '@paddock/protocol';
import type { SandboxProcess, SandboxSize } from './provider.ts';
import { exitAccount } from './thread-sandbox.ts';
import { harnessesOf } from './turns/sandbox-harnesses.ts';
import type { Workspaces } from './workspaces/workspaces.ts';

/** A harness value whose program a standby sandbox starts ahead of its thread, and its profile. */
export interface StandbyAgent {
  name: string;
  profile: HarnessProfile;
}

export interface StandbyOptions {
  size: SandboxSize;
  /** How many to keep booted; 0 turns the pool off. */
  count: number;
  /** The ACP programs each standby starts ahead of its thread, their sessions open (D9). */
  agents?: StandbyAgent[];
}

export interface StandbyPoolOptions extends StandbyOptions {
  /** Holds each standby's workspace; must be on the filesystem of the thread workspaces (see `claim`). */
  dir: string;
  /** Makes each standby's workspace (with a uid of its own) and hands it over to its thread. */
  workspaces: Workspaces;
  /** Boots one sandbox of the pool's size with `workspaceDir` as its workspace, running as `uid`. */
  boot: (id: string, workspaceDir: string, uid: number | undefined) => Promise<SandboxProcess>;
  /** The environment a standby's programs start with: the sandbox's, without a thread's parts. */
  agentEnv: (workspaceDir: string) => Record<string, string>;
  /** The sandbox's hands, for starting its programs; undefined where its workspace has no fixed path. */
  hands: (sandbox: SandboxProcess) => SandboxHands | undefined;
  log: (level: 'info' | 'warn' | 'error', message: string) => void;
}

interface Slot {
  readonly id: string;
  readonly dir: string;
  /** Settles at `ready`; undefined when the boot failed (the slot is cleaned up then). */
  booted: Promise<SandboxProcess | undefined>;
  /** Its supervisor is ready. */
  ready: boolean;
  /** Its programs are started (true at once when it starts none). */
  agentsStarted: boolean;
  /** The sandbox exited; a claim that waited for its boot must not hand it out. */
  gone: boolean;
  /** Claimed: programs not started yet stay so. */
  taken: boolean;
}

const firstRetryMs = 1_000;
const lastRetryMs = 60_000;

/**
 * Sandboxes booted ahead of need, each with a workspace of its own (and the coding-agent programs the
 * deployment names started, their sessions open), so that a new thread's first turn waits for no
 * boot. They know nothing of a thread until claimed: the thread's environment (secrets included)
 * reaches their processes only after the claim.
 */
export class StandbyPool {
  readonly #options: StandbyPoolOptions;
  readonly #slots: Slot[] = [];
  #waiters: (() => void)[] = [];
  #filling = false;
  #cleared: Promise<void> | undefined;
  #closed = false;

  constructor(options: StandbyPoolOptions) {
    this.#options = options;
  }

  /** Boots standbys in the background until the pool is full; one at a time, so they do not crowd the CPU. */
  fill(): void {
    if (this.#filling || this.#closed) return;
    this.#filling = true;
    void this.#fill();
  }

  /**
   * Hands a standby of `size` over to a thread whose workspace is `workspaceDir`, which must not exist
   * or be an empty directory nobody gave a uid yet: the standby's workspace becomes the thread's (see
   * `Workspaces.adopt`), and with it the standby's uid. The sandbox keeps seeing it as its workspace.
   * A standby still booting is taken too: it is further along than a fresh boot would be. Undefined
   * when none fits; the caller boots afresh then.
   */
  async claim(size: SandboxSize, workspaceDir: string): Promise<SandboxProcess | undefined> {
    if (this.#closed || size !== this.#options.size || this.#slots.length === 0) return undefined;
    if (!(await this.#options.workspaces.adoptable(workspaceDir))) return undefined;
    const slot = this.#take();
    if (!slot) return undefined;
    const sandbox = await slot.booted;
    if (!sandbox) return undefined;
    try {
      if (slot.gone) throw new Error('it exited while waiting');
      // Files put into the workspace meanwhile are never lost: the handover then refuses.
      if (!(await this.#options.workspaces.adopt(slot.dir, workspaceDir)))
        throw new Error('the workspace was made meanwhile');
      return sandbox;
    } catch (error) {
      this.#options.log('warn', `standby sandbox ${slot.id} not claimed: ${String(error)}`);
      await this.#discard(slot, sandbox);
      return undefined;
    }
  }

  /** Settles once the pool is full of booted standbys with their programs started (or closed). */
  whenWarm(): Promise<void> {
    if (this.#allWarm()) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Destroys every standby and removes their directories. */
  async close(): Promise<void> {
    this.#closed = true;
    const slots = this.#slots.splice(0);
    this.#changed();
    await Promise.all(
      slots.map(async (slot) => {
        slot.taken = true;
        const sandbox = await slot.booted;
        if (sandbox) await this.#discard(slot, sandbox);
      }),
    );
    await this.#cleared;
    await this.#options.workspaces.removeAllUnder(this.#options.dir);
  }

  async #fill(): Promise<void> {
    // Whatever a previous runner left here is no workspace of any thread.
    this.#cleared ??= this.#options.workspaces.removeAllUnder(this.#options.dir);
    await this.#cleared;
    let retryMs = firstRetryMs;
    for (;;) {
      // Decided in the same tick as `#filling` is cleared, so a claim never finds the pool idle and short.
      if (this.#closed || this.#slots.length >= this.#options.count) {
        this.#filling = false;
        return;
      }
      const slot = this.#start();
      if (await slot.booted) {
        retryMs = firstRetryMs;
        continue;
      }
      // A provider that cannot boot now is not hammered.
      await sleep(retryMs, undefined, { ref: false });
      retryMs = Math.min(retryMs * 2, lastRetryMs);
    }
  }

  #start(): Slot {
    const id = `standby-${randomBytes(4).toString('hex')}`;
    const slot: Slot = {
      id,
      dir: join(this.#options.dir, id),
      booted: Promise.resolve(undefined),
      ready: false,
      agentsStarted: !this.#options.agents?.length,
      gone: false,
      taken: false,
    };
    slot.booted = this.#boot(slot);
    this.#slots.push(slot);
    return slot;
  }

  async #boot(slot: Slot): Promise<SandboxProcess | undefined> {
    let sandbox: SandboxProcess;
    try {
      const { uid } = await this.#options.workspaces.ensure(slot.dir, this.#options.size);
      sandbox = await this.#options.boot(slot.id, slot.dir, uid);
    } catch (error) {
      this.#options.log('warn', `standby sandbox did not boot: ${String(error)}`);
      this.#remove(slot);
      await this.#options.workspaces.remove(slot.dir).catch(() => {});
      return undefined;
    }
    void sandbox.exited.then((exit) => {
      slot.gone = true;
      if (!this.#slots.includes(slot)) return;
      this.#options.log('warn', `standby sandbox ${slot.id} exited (${exitAccount(exit)}); replacing it`);
      this.#remove(slot);
      void this.#discard(slot, sandbox).then(() => this.fill());
    });
    slot.ready = true;
    if (this.#slots.includes(slot) && !slot.agentsStarted) void this.#startAgents(slot, sandbox);
    this.#changed();
    return sandbox;
  }

  /** Starts the programs ahead of any thread, one at a time: each start takes a core for a second or more. */
  async #startAgents(slot: Slot, sandbox: SandboxProcess): Promise<void> {
    const hands = this.#options.hands(sandbox);
    const env = this.#options.agentEnv(slot.dir);
    const started: string[] = [];
    for (const { name, profile } of this.#options.agents ?? []) {
      const workspaceDir = env.PADDOCK_WORKSPACE;
      if (slot.taken || slot.gone || !hands || !workspaceDir) break;
      try {
        await harnessesOf(sandbox).get(name)?.warmUp?.({ profile, env, workspaceDir, sandbox: hands });
        started.push(name);
      } catch (error) {
        this.#options.log('warn', `standby sandbox ${slot.id}: ${name} not started ahead: ${String(error)}`);
      }
    }
    slot.agentsStarted = true;
    this.#options.log('info', `standby sandbox ${slot.id}: started ahead: ${started.join(', ') || 'none'}`);
    this.#changed();
  }

  /** The slot furthest along: a ready one, else a booted one, else the oldest (nearest to booted). */
  #take(): Slot | undefined {
    const slot = this.#slots.find(isReady) ?? this.#slots[0];
    if (!slot) return undefined;
    this.#remove(slot);
    slot.taken = true;
    this.fill();
    return slot;
  }

  #remove(slot: Slot): void {
    const at = this.#slots.indexOf(slot);
    if (at !== -1) this.#slots.splice(at, 1);
    this.#changed();
  }

  async #discard(slot: Slot, sandbox: SandboxProcess): Promise<void> {
    await sandbox.destroy();
    await this.#options.workspaces.remove(slot.dir);
  }

  #allWarm(): boolean {
    if (this.#closed) return true;
    return this.#slots.length >= this.#options.count && this.#slots.every(isReady);
  }

  #changed(): void {
    if (!this.#allWarm()) return;
    for (const resolve of this.#waiters.splice(0)) resolve();
  }
}

/** Booted, and its programs started: a thread's first turn waits for nothing. */
function isReady(slot: Slot): boolean {
  return slot.ready && slot.agentsStarted;
}
