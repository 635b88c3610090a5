import { lchown, lstat, mkdir, readdir, rename, rm, rmdir, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { unmountAll } from '../mounts.ts';
import type { SandboxSize } from '../provider.ts';
import { UidClaims, type UidRange } from './uid-claims.ts';
import {
  bindVolume,
  clearNewVolume,
  isMountPoint,
  makeVolumeImage,
  mountVolume,
  releaseVolumesUnder,
} from './workspace-volume.ts';

export interface WorkspacesOptions {
  /**
   * Holds the uid claims and the volume images. On the filesystem of the workspaces and of the
   * runner's standby workspaces, which are handed over to threads by rename.
   */
  stateDir: string;
  /** Sandbox uids; undefined when not root: sandboxes then run as the server's own user. */
  uids?: UidRange;
  /** Disk quota in bytes per size (needs root); a size without one gets a plain directory. */
  quotas?: Partial<Record<SandboxSize, number>>;
}

export interface Workspace {
  dir: string;
  /** The uid its sandbox runs as: the owner of the directory. Undefined when not root. */
  uid: number | undefined;
}

const madeElsewhereWaitMs = 2_000;

/**
 * The one place workspaces are made, whoever needs one first (a sandbox boot, an upload before any
 * boot, a detached runner). A workspace is owned by its sandbox's uid from the moment it exists, and
 * that owner is the record of the uid: it survives restarts, and the sandbox finds its files its own.
 * With a quota for the size, the workspace is a volume of that size (see workspace-volume.ts),
 * mounted whenever `ensure` answers. Directories made before either (plain, another owner) keep
 * working as they are, without a quota.
 */
export class Workspaces {
  readonly #options: WorkspacesOptions;
  readonly #claims: UidClaims | undefined;
  readonly #pending = new Map<string, Promise<unknown>>();
  readonly #mounted = new Set<string>();

  constructor(options: WorkspacesOptions) {
    this.#options = options;
    this.#claims = options.uids && new UidClaims(join(options.stateDir, 'uids'), options.uids);
  }

  /** What bounds a workspace, for the capabilities' isolation account. */
  describe(): string {
    if (!this.#claims) return 'workspaces without a disk quota (needs root)';
    const quotas = (['S', 'M', 'L'] as const)
      .filter((size) => this.hasQuota(size))
      .map((size) => `${size} ${formatBytes(this.#options.quotas![size]!)}`);
    return quotas.length
      ? `workspace disk quota ${quotas.join(', ')} (a volume each)`
      : 'workspaces without a disk quota (none configured)';
  }

  /** Whether workspaces of this size get a quota. */
  hasQuota(size: SandboxSize): boolean {
    return this.#claims !== undefined && (this.#options.quotas?.[size] ?? 0) > 0;
  }

  /** Makes the workspace at `dir` unless it exists, mounts its volume if it has one; answers its uid. */
  ensure(dir: string, size: SandboxSize): Promise<Workspace> {
    return this.#serially(dir, () => this.#ensure(dir, size));
  }

  /**
   * Hands the workspace at `from` (a standby sandbox's, running as its uid) over to `to`, which must
   * not exist or be an empty directory that nothing has claimed yet; answers whether it did. The
   * sandbox keeps its mount and so its files; `to` gets its owner (the uid), volume and quota.
   */
  adopt(from: string, to: string): Promise<boolean> {
    return this.#serially(to, () => this.#adopt(from, to));
  }

  /** Whether `adopt` would take `to` now: it does not exist, or is empty and nobody gave it a uid. */
  async adoptable(to: string): Promise<boolean> {
    const target = await lstat(to).catch(() => undefined);
    if (!target) return true;
    // An empty directory made ahead by a caller, without a uid or a volume, may be replaced.
    if (!target.isDirectory() || (this.#claims && target.uid !== 0)) return false;
    if (await lstat(this.#imageOf(to)).catch(() => undefined)) return false;
    return (await readdir(to).catch(() => ['?'])).length === 0;
  }

  /** Removes a workspace nobody will use again (a standby's): unmounts it, frees its uid and image. */
  remove(dir: string): Promise<void> {
    return this.#serially(dir, async () => {
      const owner = await stat(dir).then(
        (s) => s.uid,
        () => undefined,
      );
      if (this.#mounted.delete(dir) || (await isMountPoint(dir).catch(() => false))) await unmountAll(dir);
      await rm(dir, { recursive: true, force: true });
      await unlink(this.#imageOf(dir)).catch(() => {});
      if (owner !== undefined && this.#claims?.contains(owner)) await this.#claims.release(owner);
    });
  }

  /** Removes every workspace under `parent` (standbys a killed runner left), volumes first. */
  async removeAllUnder(parent: string): Promise<void> {
    if (this.#claims) await releaseVolumesUnder(parent);
    for (const name of await readdir(parent).catch(() => [])) await this.remove(join(parent, name));
    await rm(parent, { recursive: true, force: true });
  }

  /**
   * Unmounts the volumes this process mounted. Sandboxes still running keep theirs (their mount
   * namespace holds it); the next `ensure` mounts it again, on the same loop device.
   */
  async close(): Promise<void> {
    await Promise.all([...this.#pending.values()].map((each) => each.catch(() => {})));
    for (const dir of this.#mounted) await unmountAll(dir);
    this.#mounted.clear();
  }

  async #ensure(dir: string, size: SandboxSize): Promise<Workspace> {
    const claims = this.#claims;
    if (!claims) {
      await mkdir(dir, { recursive: true });
      return { dir, uid: undefined };
    }
    const existing = await lstat(dir).catch(() => undefined);
    if (existing) return this.#existing(dir, claims);
    await mkdir(dirname(dir), { recursive: true });
    const uid = await claims.claim(dir);
    try {
      const quota = this.#options.quotas?.[size] ?? 0;
      if (quota > 0) {
        const image = this.#imageOf(dir);
        await mkdir(dirname(image), { recursive: true, mode: 0o700 });
        if (!(await makeVolumeImage(image, quota, uid))) return await this.#madeElsewhere(dir, uid, claims);
      }
      try {
        await mkdir(dir, { mode: 0o755 });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        // With a volume, the image decides: this call made it, so the workspace is this uid's.
        if (quota === 0) return await this.#madeElsewhere(dir, uid, claims);
      }
      // The directory's own owner too: it is the record while the volume is not mounted.
      await lchown(dir, uid, uid);
      if (quota > 0) {
        await this.#mount(dir);
        await clearNewVolume(dir);
      }
      return { dir, uid };
    } catch (error) {
      await claims.release(uid);
      throw error;
    }
  }

  /** Another process is making this workspace: ours goes, theirs is answered once it is owned. */
  async #madeElsewhere(dir: string, uid: number, claims: UidClaims): Promise<Workspace> {
    await claims.release(uid);
    for (let waited = 0; waited < madeElsewhereWaitMs; waited += 10) {
      const made = await stat(dir).catch(() => undefined);
      if (made && made.uid !== 0) break;
      await sleep(10);
    }
    // An image whose maker died before making the directory: the image holds the uid, mounted below.
    await mkdir(dir, { mode: 0o755 }).catch(() => {});
    return this.#existing(dir, claims);
  }

  async #existing(dir: string, claims: UidClaims): Promise<Workspace> {
    const own = await lstat(dir);
    if (!own.isDirectory()) throw new Error(`workspace ${dir} is not a directory`);
    const image = this.#imageOf(dir);
    if (!(await isMountPoint(dir)) && (await lstat(image).catch(() => undefined))) await this.#mount(dir);
    const { uid } = await stat(dir);
    if (uid !== 0) return { dir, uid };
    // Made as root by a server from before sandbox uids, or one that died halfway: claimed now.
    const claimed = await claims.claim(dir);
    await lchown(dir, claimed, claimed);
    return { dir, uid: claimed };
  }

  async #adopt(from: string, to: string): Promise<boolean> {
    if (!(await this.adoptable(to))) return false;
    const target = await lstat(to).catch(() => undefined);
    await mkdir(dirname(to), { recursive: true });
    if (!this.#mounted.has(from) && !(await isMountPoint(from))) {
      // rename(2) replaces an empty directory in one step and refuses a non-empty one.
      await rename(from, to);
      return true;
    }
    if (target) {
      try {
        await rmdir(to);
      } catch {
        return false;
      }
    }
    const { uid } = await stat(from);
    try {
      await mkdir(to, { mode: 0o755 });
    } catch {
      return false;
    }
    await lchown(to, uid, uid);
    await rename(this.#imageOf(from), this.#imageOf(to));
    await bindVolume(from, to);
    this.#mounted.add(to);
    this.#mounted.delete(from);
    // Off the thread's way (the bind above is all it waits for); `close` waits for it.
    void this.#serially(from, async () => {
      await unmountAll(from);
      await rmdir(from).catch(() => {});
    });
    return true;
  }

  async #mount(dir: string): Promise<void> {
    await mountVolume(this.#imageOf(dir), dir);
    this.#mounted.add(dir);
  }

  #imageOf(dir: string): string {
    return join(this.#options.stateDir, 'volumes', `${basename(dir)}.img`);
  }

  /** One operation at a time per workspace in this process. */
  #serially<T>(dir: string, work: () => Promise<T>): Promise<T> {
    const before = this.#pending.get(dir) ?? Promise.resolve();
    const next = before.catch(() => {}).then(work);
    this.#pending.set(dir, next);
    void next
      .catch(() => {})
      .finally(() => {
        if (this.#pending.get(dir) === next) this.#pending.delete(dir);
      });
    return next;
  }
}

function formatBytes(bytes: number): string {
  for (const [unit, size] of [
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
  ] as const) {
    if (bytes >= size) return `${Math.round((bytes / size) * 10) / 10} ${unit}`;
  }
  return `${bytes} bytes`;
}
