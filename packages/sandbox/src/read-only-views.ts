import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { chmod, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { releaseLeftoverMounts, releaseMountPoint } from './bwrap/shared-mount.ts';
import { runToExit } from './run-to-exit.ts';

/**
 * Read-only views of host directories whose paths a sandbox must not learn. A bind mount shows its
 * source's path from the root of the source's filesystem in /proc/self/mountinfo, so binding the
 * checkout anywhere still names it. Each view is an overlay (a filesystem of its own, root `/`) over
 * the directory and an empty one, mounted on the host with the layers named as `/proc/self/fd/N` of
 * the `mount` process: that is all its options show. Sandboxes bind the views. Needs root; without it
 * the directories are bound as they are, and the paths show.
 */
export class ReadOnlyViews {
  readonly #root: string;
  readonly #points: string[] = [];
  readonly #enabled: boolean;
  #failed = false;

  private constructor(root: string, enabled: boolean) {
    this.#root = root;
    this.#enabled = enabled;
  }

  /** Whether every view so far hides its source: false when not root, without overlayfs, or one failed. */
  get hiding(): boolean {
    return this.#enabled && !this.#failed;
  }

  /** Clears views a crashed runner left under `root`. */
  static async open(root: string, asRoot: boolean): Promise<ReadOnlyViews> {
    if (!asRoot) return new ReadOnlyViews(root, false);
    await releaseLeftoverMounts(root);
    for (const dir of ['empty', 'trial-layer'])
      await mkdir(join(root, dir), { recursive: true, mode: 0o755 });
    await chmod(root, 0o755);
    const views = new ReadOnlyViews(root, true);
    // One trial view decides: a kernel without overlayfs binds the directories as they are.
    const trial = await views.#mount(join(root, 'trial-layer'), 'trial').catch(() => undefined);
    if (trial === undefined) return new ReadOnlyViews(root, false);
    await views.release();
    return views;
  }

  /**
   * A path showing `dir` read-only: the view, or `dir` itself when views cannot hide (a directory
   * overlayfs refuses as a layer, say), which `hiding` then reports.
   */
  async show(dir: string): Promise<string> {
    if (!this.#enabled) return dir;
    return this.#mount(dir, `v${this.#points.length}`).catch(() => {
      this.#failed = true;
      return dir;
    });
  }

  async release(): Promise<void> {
    for (const point of this.#points.splice(0)) await releaseMountPoint(point);
  }

  async #mount(dir: string, name: string): Promise<string> {
    const point = join(this.#root, name);
    await mkdir(point, { recursive: true, mode: 0o755 });
    const layers = [openSync(dir, 'r'), openSync(join(this.#root, 'empty'), 'r')];
    try {
      const child = spawn(
        'mount',
        ['-t', 'overlay', 'paddock', '-o', 'ro,lowerdir=/proc/self/fd/3:/proc/self/fd/4', point],
        { stdio: ['ignore', 'ignore', 'pipe', ...layers], env: { PATH: '/usr/bin:/bin' } },
      );
      const { code, stderr } = await runToExit(child, 10_000, 'mount');
      if (code !== 0) throw new Error(`cannot mount a view of ${dir}: ${stderr.trim()}`);
    } finally {
      for (const fd of layers) closeSync(fd);
    }
    this.#points.push(point);
    return point;
  }
}
