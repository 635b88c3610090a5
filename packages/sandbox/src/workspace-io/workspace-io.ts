import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type {
  EntryStats,
  Refused,
  TreeWalkNode,
  WorkspaceAnswer,
  WorkspaceRequest,
} from '@paddock/workspace-helper';
import { HelperPool } from './helper-pool.ts';
import type { HelperProcess } from './helper-process.ts';

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
