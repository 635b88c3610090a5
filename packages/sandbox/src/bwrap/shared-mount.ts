import { mkdir, readdir, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { mount, unmountAll } from '../mounts.ts';

/**
 * A sandbox's `/shared`: a host directory the sandbox binds at boot, made a shared mount point first.
 * A standby boots before anyone knows its thread, so the team's folder is bound onto that point
 * later, from the host; mount propagation carries it into the running sandbox. Needs root.
 */
export class SharedMount {
  readonly path: string;
  /** The staging point's release, under way after an attach. */
  #staging: Promise<void> | undefined;

  private constructor(path: string) {
    this.path = path;
  }

  static async prepare(root: string, sandboxId: string): Promise<SharedMount> {
    const path = join(root, sandboxId);
    await mkdir(path, { recursive: true, mode: 0o755 });
    await mount(['--bind', '--make-shared', path, path]);
    return new SharedMount(path);
  }

  /**
   * Shows the team's folder at the sandbox's `/shared`, nosuid and nodev. Propagation copies a mount
   * as it is when made, and a later remount of the host's copy does not reach the sandbox's: so the
   * folder is bound with those flags at a private staging point first, and that mount (flags and all)
   * bound onto the sandbox's point.
   */
  async attach(teamDir: string): Promise<void> {
    const staging = `${this.path}.staging`;
    await mkdir(staging, { mode: 0o700 });
    try {
      await mount(['--bind', '-o', 'nosuid,nodev', teamDir, staging]);
      await mount(['--bind', staging, this.path]);
    } finally {
      // Off the thread's way: the sandbox's point holds a mount of its own now.
      this.#staging = releaseMountPoint(staging);
    }
  }

  async release(): Promise<void> {
    await this.#staging;
    await releaseMountPoint(this.path);
  }
}

/** Removes the mount points a crashed runner left behind. */
export async function releaseLeftoverMounts(root: string): Promise<void> {
  for (const name of await readdir(root).catch(() => [])) await releaseMountPoint(join(root, name));
}

export async function releaseMountPoint(path: string): Promise<void> {
  // The team folder sits on the point's own bind, one mount over the other.
  await unmountAll(path);
  await rmdir(path).catch(() => {});
}
