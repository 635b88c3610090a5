import { createHash } from 'node:crypto';
import {
  access,
  constants,
  mkdir,
  readdir,
  readFile,
  rename,
  rmdir,
  stat,
  writeFile,
} from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SandboxLimits } from '../limits.ts';

/** Where cgroup v1 controllers are mounted, and the group every sandbox's own group lives under. */
export interface CgroupConfig {
  mount: string;
  parent: string;
}

export const defaultCgroupConfig: CgroupConfig = { mount: '/sys/fs/cgroup', parent: 'paddock' };

/**
 * The groups of one provider's sandboxes: under `paddock/<key>`, the key a hash of its state dir.
 * A node or runner that comes back on the same data after a crash finds its own groups there, and
 * only its own: every other node and runner on the host has a parent of its own.
 */
export function ownCgroupConfig(stateDir: string, mount = defaultCgroupConfig.mount): CgroupConfig {
  const key = createHash('sha256').update(resolve(stateDir)).digest('hex').slice(0, 12);
  return { mount, parent: `${defaultCgroupConfig.parent}/${key}` };
}

const limitControllers = ['memory', 'cpu', 'pids'] as const;
const allControllers = [...limitControllers, 'freezer'];
const cpuPeriodMicros = 100_000;

/** True when this process can create groups for all limit controllers (root on a cgroup v1 host). */
export async function cgroupsUsable(config: CgroupConfig): Promise<boolean> {
  try {
    for (const controller of limitControllers) {
      const parent = join(config.mount, controller, config.parent);
      await mkdir(parent, { recursive: true });
      await access(join(parent, 'cgroup.procs'), constants.W_OK);
    }
    await access(join(config.mount, 'memory', config.parent, 'memory.limit_in_bytes'), constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Removes the empty groups a crashed runner left under the parent. rmdir refuses a group that still
 * has processes, so a live sandbox (of another runner sharing the parent) is never touched.
 */
export async function removeEmptyGroups(config: CgroupConfig): Promise<void> {
  for (const controller of allControllers) {
    const parent = join(config.mount, controller, config.parent);
    for (const name of await childGroups(parent)) await rmdirIfOld(join(parent, name));
  }
}

/** A group just created by another runner is still empty until its sandbox joins it: young ones stay. */
async function rmdirIfOld(dir: string): Promise<void> {
  if (await isOld(dir)) await rmdir(dir).catch(() => {});
}

async function isOld(dir: string): Promise<boolean> {
  const { mtimeMs } = await stat(dir).catch(() => ({ mtimeMs: Date.now() }));
  return mtimeMs < Date.now() - 60_000;
}

/**
 * What a predecessor on the same state dir left when it died (`kill -9`, a lost host): each group
 * under its own parent ({@link ownCgroupConfig}) is a sandbox that lost its runner, whose processes
 * are killed and whose groups are removed, however young. Beside it, the parents of other owners
 * are only swept of empty groups older than a minute (an owner whose data dir is gone for good), and
 * so are groups of older versions, which sat directly under `paddock`.
 */
export async function removeLeftoverGroups(config: CgroupConfig): Promise<void> {
  const names = new Set<string>();
  const present = new Map<string, string[]>();
  for (const controller of allControllers) {
    for (const name of await childGroups(join(config.mount, controller, config.parent))) {
      names.add(name);
      present.set(name, [...(present.get(name) ?? []), controller]);
    }
  }
  for (const name of names) await SandboxCgroup.leftover(config, present.get(name)!, name).destroy();
  const others = { mount: config.mount, parent: dirname(config.parent) };
  for (const controller of allControllers) {
    const root = join(config.mount, controller, others.parent);
    for (const name of await childGroups(root)) {
      if (name === basename(config.parent)) continue;
      // Its age before its children go: removing one makes the parent look new.
      const old = await isOld(join(root, name));
      await removeEmptyGroups({ mount: config.mount, parent: join(others.parent, name) });
      if (old) await rmdir(join(root, name)).catch(() => {});
    }
  }
}

async function childGroups(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isDirectory()).map((e) => e.name);
}

/** Removes the provider's own parent groups once its sandboxes are gone (a clean shutdown). */
export async function removeOwnParent(config: CgroupConfig): Promise<void> {
  for (const controller of allControllers)
    await rmdir(join(config.mount, controller, config.parent)).catch(() => {});
}

/** One sandbox's groups: the memory, cpu and pids limits, plus freezer (when mounted) for a race-free kill. */
export class SandboxCgroup {
  readonly #config: CgroupConfig;
  readonly #controllers: string[];
  #id: string;

  private constructor(config: CgroupConfig, controllers: string[], id: string) {
    this.#config = config;
    this.#controllers = controllers;
    this.#id = id;
  }

  /** The groups a dead predecessor left (in the controllers they are in), to destroy them. */
  static leftover(config: CgroupConfig, controllers: string[], id: string): SandboxCgroup {
    return new SandboxCgroup(config, controllers, id);
  }

  /** Creates the groups without limits; `applyLimits` sets them once the sandbox's size is known. */
  static async create(config: CgroupConfig, id: string): Promise<SandboxCgroup> {
    const controllers: string[] = [];
    for (const controller of limitControllers) {
      await mkdir(join(config.mount, controller, config.parent, id), { recursive: true });
      controllers.push(controller);
    }
    try {
      await mkdir(join(config.mount, 'freezer', config.parent, id), { recursive: true });
      controllers.push('freezer');
    } catch {}
    return new SandboxCgroup(config, controllers, id);
  }

  get id(): string {
    return this.#id;
  }

  /** The files a process writes its pid to, to join every group before it execs into the sandbox. */
  get procsFiles(): string[] {
    return this.#dirs().map((dir) => join(dir, 'cgroup.procs'));
  }

  async applyLimits(limits: SandboxLimits): Promise<void> {
    const dir = (controller: string) => join(this.#config.mount, controller, this.#config.parent, this.#id);
    await writeFile(join(dir('memory'), 'memory.limit_in_bytes'), String(limits.memoryBytes));
    // Without the memsw limit a host with swap would page the sandbox out instead of OOM-killing it.
    await writeFile(join(dir('memory'), 'memory.memsw.limit_in_bytes'), String(limits.memoryBytes)).catch(
      () => {},
    );
    await writeFile(join(dir('cpu'), 'cpu.cfs_period_us'), String(cpuPeriodMicros));
    await writeFile(join(dir('cpu'), 'cpu.cfs_quota_us'), String(limits.cpus * cpuPeriodMicros));
    await writeFile(join(dir('pids'), 'pids.max'), String(limits.pids));
  }

  /** cgroup v1 renames a group in place, members and all: a standby's groups take the sandbox's id. */
  async rename(id: string): Promise<void> {
    for (const controller of this.#controllers) {
      const parent = join(this.#config.mount, controller, this.#config.parent);
      await rename(join(parent, this.#id), join(parent, id));
    }
    this.#id = id;
  }

  async pids(): Promise<number[]> {
    const all = new Set<number>();
    for (const file of this.procsFiles) {
      const text = await readFile(file, 'utf8').catch(() => '');
      for (const line of text.split('\n')) if (line.trim() !== '') all.add(Number(line));
    }
    return [...all];
  }

  /** Kills every process in the groups, then removes them. Freezing first stops forks racing the kill. */
  async destroy(): Promise<void> {
    for (let attempt = 0; attempt < 50; attempt++) {
      const frozen = await this.setFrozen(true);
      const pids = await this.pids();
      for (const pid of pids) killQuietly(pid);
      if (frozen) await this.setFrozen(false);
      if (pids.length === 0) break;
      await sleep(20);
    }
    for (const dir of this.#dirs()) await removeWhenEmpty(dir);
  }

  #dirs(): string[] {
    return this.#controllers.map((controller) =>
      join(this.#config.mount, controller, this.#config.parent, this.#id),
    );
  }

  /** Freezes or thaws every process in the group; false without a freezer group. */
  async setFrozen(frozen: boolean): Promise<boolean> {
    if (!this.#controllers.includes('freezer')) return false;
    const state = join(this.#config.mount, 'freezer', this.#config.parent, this.#id, 'freezer.state');
    try {
      await writeFile(state, frozen ? 'FROZEN' : 'THAWED');
      if (!frozen) return true;
      // A busy machine takes its time to freeze every process: up to half a second.
      for (let i = 0; i < 250; i++) {
        if ((await readFile(state, 'utf8')).trim() === 'FROZEN') return true;
        await sleep(2);
      }
      // Not frozen in time: undone, so no process is left half frozen by a freeze that "failed".
      await writeFile(state, 'THAWED');
    } catch {}
    return false;
  }
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {}
}

async function removeWhenEmpty(dir: string): Promise<void> {
  for (let attempt = 0; attempt < 50; attempt++) {
    try {
      await rmdir(dir);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      await sleep(20);
    }
  }
}
