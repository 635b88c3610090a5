import { randomBytes } from 'node:crypto';
import type { BwrapLauncher } from './bwrap-launch.ts';
import type { SandboxCgroup } from './cgroups.ts';
import type { SharedMount } from './shared-mount.ts';

export interface Launcher {
  launcher: BwrapLauncher;
  cgroup: SandboxCgroup | undefined;
  /** The sandbox's `/shared` mount point, made ahead too (a `mount` call is another few ms). */
  shared: SharedMount | undefined;
}

/**
 * Keeps one launcher spawned ahead of need: already in its cgroups (with its shared mount point),
 * bwrap blocked on reading its options. Joining a cgroup v1 group waits out an RCU grace period (~10 ms here), and the spawn
 * itself costs a few more; a standby takes both off the next boot.
 */
export class StandbyLauncher {
  readonly #make: (name: string) => Promise<Launcher>;
  #standby: Promise<Launcher> | undefined;
  #closed = false;

  constructor(make: (name: string) => Promise<Launcher>) {
    this.#make = make;
  }

  /** The standby when it is still good, else a fresh launcher. Call `refill` once the boot is done. */
  async take(): Promise<Launcher> {
    const standby = this.#standby;
    this.#standby = undefined;
    const taken = await standby?.catch(() => undefined);
    if (taken) setReferenced(taken, true);
    if (taken && (await ready(taken))) return taken;
    if (taken) await discard(taken);
    const fresh = await this.#make(standbyName());
    try {
      await fresh.launcher.joined;
    } catch (error) {
      await discard(fresh);
      throw error;
    }
    return fresh;
  }

  /** Spawns the next standby; after a boot, so the spawn does not compete with it for the CPU. */
  refill(): void {
    if (this.#closed || this.#standby) return;
    const next = this.#make(standbyName()).then((made) => {
      // A waiting standby alone must not keep the host process alive.
      setReferenced(made, false);
      return made;
    });
    next.catch(() => {});
    this.#standby = next;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const standby = this.#standby;
    this.#standby = undefined;
    const taken = await standby?.catch(() => undefined);
    if (taken) await discard(taken);
  }
}

function setReferenced({ launcher }: Launcher, referenced: boolean): void {
  const { child } = launcher;
  if (referenced) child.ref();
  else child.unref();
  for (const stream of child.stdio) {
    const socket = stream as { ref?: () => void; unref?: () => void } | null;
    if (referenced) socket?.ref?.();
    else socket?.unref?.();
  }
}

/** Not `standby-`: that names the runner's standby sandboxes (standby-pool.ts), a different thing. */
function standbyName(): string {
  return `launcher-${randomBytes(6).toString('hex')}`;
}

/** In its cgroups and still waiting for its options: a standby that died meanwhile is no good. */
async function ready({ launcher }: Launcher): Promise<boolean> {
  const joined = await launcher.joined.then(
    () => true,
    () => false,
  );
  const { child } = launcher;
  return joined && child.pid !== undefined && child.exitCode === null && child.signalCode === null;
}

async function discard({ launcher, cgroup, shared }: Launcher): Promise<void> {
  const pid = launcher.child.pid;
  try {
    if (pid !== undefined) process.kill(-pid, 'SIGKILL');
  } catch {}
  await cgroup?.destroy();
  await shared?.release();
}
