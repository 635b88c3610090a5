import { closeSync, constants, openSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { workspaceHelperDir } from '@paddock/workspace-helper';
import { HelperProcess } from './helper-process.ts';

/**
 * Helpers working on a request at once, over all workspaces; more requests wait for one (each is a
 * Node process). A download counts until its first answer; its bytes then flow outside the bound.
 */
const maxBusy = 16;
/** Idle helpers kept per workspace, and for how long, so that a burst of requests pays one spawn. */
const maxIdlePerWorkspace = 4;
const idleMs = 5_000;

/** Helpers by workspace: idle ones are reused while their workspace is still the directory they hold. */
export class HelperPool {
  readonly #idle = new Map<string, { helper: HelperProcess; timer: NodeJS.Timeout }[]>();
  readonly #waiting: (() => void)[] = [];
  #busy = 0;
  readonly nodePath: string;
  readonly setprivPath: string;

  constructor(nodePath: string, setprivPath: string) {
    this.nodePath = nodePath;
    this.setprivPath = setprivPath;
  }

  /**
   * A helper for `workspaceDir`. `freeSlot` lets another request start while this one goes on (a
   * download streaming at its client's pace); `release` ends the request, keeping the helper for
   * the next one or ending it.
   */
  async take(
    workspaceDir: string,
  ): Promise<{ helper: HelperProcess; freeSlot: () => void; release: (reuse: boolean) => void }> {
    while (this.#busy >= maxBusy) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    this.#busy++;
    let slotHeld = true;
    const freeSlot = () => {
      if (!slotHeld) return;
      slotHeld = false;
      this.#busy--;
      this.#waiting.shift()?.();
    };
    let helper: HelperProcess;
    try {
      helper = await this.#idleOrNew(workspaceDir);
    } catch (error) {
      freeSlot();
      throw error;
    }
    let released = false;
    const release = (reuse: boolean) => {
      freeSlot();
      if (released) return;
      released = true;
      if (reuse && helper.alive) this.#keep(workspaceDir, helper);
      else helper.kill();
    };
    return { helper, freeSlot, release };
  }

  close(): void {
    for (const idle of this.#idle.values()) {
      for (const { helper, timer } of idle) {
        clearTimeout(timer);
        helper.close();
      }
    }
    this.#idle.clear();
  }

  async #idleOrNew(workspaceDir: string): Promise<HelperProcess> {
    // The workspace directory itself is the server's path (its parent is the server's); below it, nothing is.
    const dir = await open(workspaceDir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
    try {
      const stats = await dir.stat();
      // Which directory, and whose: a helper runs as the owner it was started for.
      const identity = `${stats.dev}:${stats.ino}:${stats.uid}:${stats.gid}`;
      const idle = this.#idle.get(workspaceDir) ?? [];
      for (let kept = idle.pop(); kept; kept = idle.pop()) {
        clearTimeout(kept.timer);
        if (idle.length === 0) this.#idle.delete(workspaceDir);
        // A directory renamed over the workspace (a standby taken) is not the one a helper holds.
        if (kept.helper.identity === identity && kept.helper.alive) return kept.helper;
        kept.helper.close();
      }
      const asRoot = process.getuid?.() === 0;
      if (asRoot && stats.uid === 0) {
        throw new Error(
          `the workspace ${workspaceDir} is owned by root: its helper would run as root; refused`,
        );
      }
      const command = [
        '/proc/self/fd/5',
        '--preserve-symlinks',
        '--preserve-symlinks-main',
        '/proc/self/fd/4/main.ts',
      ];
      const argv = asRoot ? [...dropTo(this.setprivPath, stats.uid, stats.gid), ...command] : command;
      // Node and the helper's code reach it as descriptors (4: this directory, 5: Node), not by their
      // host paths, which the sandbox's user may have no way to (a checkout under /root, or in a
      // 0700 directory). The spawn has copied them when the constructor returns.
      const code = openSync(workspaceHelperDir, constants.O_RDONLY | constants.O_DIRECTORY);
      let helper: HelperProcess;
      try {
        const node = openSync(this.nodePath, constants.O_RDONLY);
        try {
          helper = new HelperProcess(argv, [dir.fd, code, node], identity);
        } finally {
          closeSync(node);
        }
      } finally {
        closeSync(code);
      }
      await helper.started();
      return helper;
    } finally {
      await dir.close();
    }
  }

  #keep(workspaceDir: string, helper: HelperProcess): void {
    const idle = this.#idle.get(workspaceDir) ?? [];
    if (idle.length >= maxIdlePerWorkspace) {
      helper.close();
      return;
    }
    const timer = setTimeout(() => {
      const now = this.#idle.get(workspaceDir);
      const at = now?.findIndex((kept) => kept.helper === helper) ?? -1;
      if (at >= 0) now!.splice(at, 1);
      if (now?.length === 0) this.#idle.delete(workspaceDir);
      helper.close();
    }, idleMs);
    timer.unref();
    idle.push({ helper, timer });
    this.#idle.set(workspaceDir, idle);
  }
}

function dropTo(setprivPath: string, uid: number, gid: number): string[] {
  return [
    setprivPath,
    `--reuid=${uid}`,
    `--regid=${gid}`,
    '--clear-groups',
    '--inh-caps=-all',
    '--bounding-set=-all',
    '--no-new-privs',
    '--',
  ];
}
