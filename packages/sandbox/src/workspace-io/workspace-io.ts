import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { HelperProcess } from './helper-process.ts';
import type { EntryStats, Refused, TreeWalkNode, WorkspaceAnswer, WorkspaceRequest } from './requests.ts';

const helperMain = join(dirname(fileURLToPath(import.meta.url)), 'main.ts');

/**
 * Helpers working on a request at once, over all workspaces; more requests wait for one (each is a
 * Node process). A download counts until its first answer; its bytes then flow outside the bound.
 */
const maxBusy = 16;
/** Idle helpers kept per workspace, and for how long, so that a burst of requests pays one spawn. */
const maxIdlePerWorkspace = 4;
const idleMs = 5_000;

export interface WorkspaceIoOptions {
  nodePath?: string;
  setprivPath?: string;
}

/**
 * Every read and write of a workspace, done by a helper process that runs as the workspace
 * directory's owner (the sandbox's user: never root, no capabilities, no_new_privs) and walks the
 * path from a descriptor of the workspace without following links (`walk.ts`). The server opens
 * only `<workspace dir>` itself, a path the sandbox cannot change (its parent is the server's), and
 * hands the descriptor over: no path the sandbox controls is resolved as root. Helpers serve one
 * request at a time and are kept a few seconds for the next one on the same workspace.
 */
export interface WorkspaceIo {
  list(
    workspaceDir: string,
    path: string,
  ): Promise<Refused | { stats: EntryStats; entries?: { name: string; stats: EntryStats }[] }>;
  tree(
    workspaceDir: string,
    path: string,
    bounds: { maxDepth: number; maxEntries: number },
  ): Promise<Refused | { root: TreeWalkNode; truncated: boolean }>;
  content(workspaceDir: string, path: string): Promise<Refused | { size: number; body: Readable }>;
  checkTarget(workspaceDir: string, path: string): Promise<Refused | { checked: true }>;
  land(
    workspaceDir: string,
    file: { path: string; size: number; tempTag: string; source: Readable },
  ): Promise<Refused | { landed: EntryStats }>;
  /** Ends every idle helper (the busy ones end when their request does). */
  close(): void;
}

export function createWorkspaceIo(options: WorkspaceIoOptions = {}): WorkspaceIo {
  const pool = new HelperPool(
    options.nodePath ?? process.execPath,
    options.setprivPath ?? '/usr/bin/setpriv',
  );

  /** Runs one request; the helper goes back to the pool once `release` is called. */
  async function run(
    workspaceDir: string,
    request: WorkspaceRequest,
    input?: Readable,
  ): Promise<{
    answer: WorkspaceAnswer;
    helper: HelperProcess;
    freeSlot: () => void;
    release: (reuse: boolean) => void;
  }> {
    const { helper, freeSlot, release } = await pool.take(workspaceDir);
    let answer: WorkspaceAnswer;
    try {
      answer = await helper.request(request, input);
    } catch (error) {
      release(false);
      throw error;
    }
    if ('failed' in answer) {
      // The helper answered and is ready for the next request.
      release(true);
      throw Object.assign(new Error(`workspace helper: ${answer.message}`), { code: answer.failed });
    }
    return { answer, helper, freeSlot, release };
  }

  /** The answer's part under `key`, a refusal as it is. */
  async function part<K extends string>(
    workspaceDir: string,
    request: WorkspaceRequest,
    key: K,
    input?: Readable,
  ): Promise<Refused | Extract<WorkspaceAnswer, Record<K, unknown>>[K]> {
    const { answer, release } = await run(workspaceDir, request, input);
    release(true);
    if ('refused' in answer) return answer;
    if (key in answer) return (answer as unknown as Record<K, never>)[key];
    throw new Error(`the workspace helper answered ${Object.keys(answer)[0]}, not ${key}`);
  }

  return {
    list: (dir, path) => part(dir, { op: 'list', path }, 'list'),
    tree: (dir, path, bounds) => part(dir, { op: 'tree', path, ...bounds }, 'tree'),
    checkTarget: async (dir, path) => {
      const answer = await part(dir, { op: 'check-target', path }, 'checked');
      return answer === true ? { checked: true } : answer;
    },
    land: async (dir, { path, size, tempTag, source }) => {
      const answer = await part(dir, { op: 'land', path, size, tempTag }, 'landed', source);
      return 'refused' in answer ? answer : { landed: answer };
    },
    content: async (dir, path) => {
      const { answer, helper, freeSlot, release } = await run(dir, { op: 'content', path });
      if ('refused' in answer) {
        release(true);
        return answer;
      }
      if (!('content' in answer)) {
        release(false);
        throw new Error('the workspace helper did not answer content');
      }
      const { size } = answer.content;
      // The bytes go at the client's pace: a slow client must not hold up every workspace's requests.
      freeSlot();
      const body = exactly(size);
      let finished = false;
      const download = helper.download((last) => {
        finished = true;
        release('done' in last);
      });
      // A client gone mid-download: the helper is still sending, so it is not reused.
      body.once('close', () => {
        if (!finished) release(false);
      });
      void pipeline(download, body).catch(() => {});
      return { size, body };
    },
    close: () => pool.close(),
  };
}

/** Helpers by workspace: idle ones are reused while their workspace is still the directory they hold. */
class HelperPool {
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
      const command = [this.nodePath, helperMain];
      const argv = asRoot ? [...dropTo(this.setprivPath, stats.uid, stats.gid), ...command] : command;
      const helper = new HelperProcess(argv, dir.fd, identity);
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

/** Passes bytes through and fails unless exactly `size` went by. */
function exactly(size: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      done(seen > size ? new Error('the file grew past its size') : null, chunk);
    },
    flush(done) {
      done(seen === size ? null : new Error(`the file ended after ${seen} of ${size} bytes`));
    },
  });
}
