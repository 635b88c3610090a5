import { type ChildProcess, spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import type { EntryStats, Refused, TreeWalkNode, WorkspaceAnswer, WorkspaceRequest } from './requests.ts';

const helperMain = join(dirname(fileURLToPath(import.meta.url)), 'main.ts');

/** Helper processes alive at once; more requests wait for one to end (each is a Node process). */
const maxHelpers = 16;

export interface WorkspaceIoOptions {
  nodePath?: string;
  setprivPath?: string;
}

/**
 * Every read and write of a workspace, each in a helper process of its own that runs as the
 * workspace directory's owner (the sandbox's user: never root, no capabilities, no_new_privs) and
 * walks the path from a descriptor of the workspace without following links (`walk.ts`). The
 * server opens only `<workspace dir>` itself, a path the sandbox cannot change (its parent is the
 * server's), and hands the descriptor over: no path the sandbox controls is resolved as root.
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
}

export function createWorkspaceIo(options: WorkspaceIoOptions = {}): WorkspaceIo {
  const nodePath = options.nodePath ?? process.execPath;
  const setprivPath = options.setprivPath ?? '/usr/bin/setpriv';
  const slots = new Slots(maxHelpers);

  async function run(
    workspaceDir: string,
    request: WorkspaceRequest,
    io: { input?: Readable; output?: boolean } = {},
  ): Promise<{ answer: WorkspaceAnswer; child: ChildProcess; exited: Promise<number | null> }> {
    const release = await slots.take();
    let child: ChildProcess;
    try {
      child = await spawnHelper(workspaceDir, request, io, nodePath, setprivPath);
    } catch (error) {
      release();
      throw error;
    }
    const exited = new Promise<number | null>((resolve) => {
      child.once('close', (code) => resolve(code));
      child.once('error', () => resolve(null));
    });
    void exited.then(release);
    const stderr = collect(child.stderr!, 4096);
    if (io.input) void pipeline(io.input, child.stdin!).catch(() => child.stdin?.destroy());
    const text = await collect(child.stdio[4] as Readable, 1 << 26);
    if (!text) {
      await exited;
      throw new Error(`the workspace helper answered nothing: ${(await stderr).trim() || 'no output'}`);
    }
    const answer = JSON.parse(text) as WorkspaceAnswer;
    if ('failed' in answer) {
      child.kill('SIGKILL');
      throw Object.assign(new Error(`workspace helper: ${answer.message}`), { code: answer.failed });
    }
    return { answer, child, exited };
  }

  /** The answer's part under `key`, a refusal as it is; the process has ended. */
  async function finished<K extends string>(
    ran: { answer: WorkspaceAnswer; exited: Promise<number | null> },
    key: K,
  ): Promise<Refused | Extract<WorkspaceAnswer, Record<K, unknown>>[K]> {
    await ran.exited;
    const { answer } = ran;
    if ('refused' in answer) return answer;
    if (key in answer) return (answer as unknown as Record<K, never>)[key];
    throw new Error(`the workspace helper answered ${Object.keys(answer)[0]}, not ${key}`);
  }

  return {
    list: async (dir, path) => finished(await run(dir, { op: 'list', path }), 'list'),
    tree: async (dir, path, bounds) => finished(await run(dir, { op: 'tree', path, ...bounds }), 'tree'),
    checkTarget: async (dir, path) => {
      const answer = await finished(await run(dir, { op: 'check-target', path }), 'checked');
      return answer === true ? { checked: true } : answer;
    },
    land: async (dir, file) => {
      const { path, size, tempTag, source } = file;
      const answer = await finished(
        await run(dir, { op: 'land', path, size, tempTag }, { input: source }),
        'landed',
      );
      return 'refused' in answer ? answer : { landed: answer };
    },
    content: async (dir, path) => {
      const { answer, child, exited } = await run(dir, { op: 'content', path }, { output: true });
      if ('refused' in answer) {
        await exited;
        return answer;
      }
      if (!('content' in answer)) {
        child.kill('SIGKILL');
        throw new Error('the workspace helper did not answer content');
      }
      const { size } = answer.content;
      const body = exactly(size);
      // A client gone mid-download ends the helper; a helper gone mid-file fails the body.
      body.once('close', () => child.kill('SIGKILL'));
      void pipeline(child.stdout!, body).catch(() => {});
      void exited.then((code) => {
        if (code !== 0) body.destroy(new Error(`the workspace helper ended with ${code} mid-file`));
      });
      return { size, body };
    },
  };
}

async function spawnHelper(
  workspaceDir: string,
  request: WorkspaceRequest,
  io: { input?: Readable; output?: boolean },
  nodePath: string,
  setprivPath: string,
): Promise<ChildProcess> {
  // The workspace directory itself is the server's path (its parent is the server's); below it, nothing is.
  const dir = await open(workspaceDir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  try {
    const { uid, gid } = await dir.stat();
    const asRoot = process.getuid?.() === 0;
    if (asRoot && uid === 0) {
      throw new Error(
        `the workspace ${workspaceDir} is owned by root: its helper would run as root; refused`,
      );
    }
    const command = [nodePath, helperMain, JSON.stringify(request)];
    const argv = asRoot ? [...dropTo(setprivPath, uid, gid), ...command] : command;
    const child = spawn(argv[0]!, argv.slice(1), {
      stdio: [io.input ? 'pipe' : 'ignore', io.output ? 'pipe' : 'ignore', 'pipe', dir.fd, 'pipe'],
      env: { PATH: '/usr/bin:/bin' },
    });
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', reject);
    });
    return child;
  } finally {
    await dir.close();
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

/** A stream's text, up to `limit` bytes. */
function collect(stream: Readable, limit: number): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let length = 0;
    stream.on('data', (chunk: Buffer) => {
      if (length < limit) chunks.push(chunk);
      length += chunk.length;
    });
    stream.once('error', () => resolve(Buffer.concat(chunks).toString('utf8')));
    stream.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
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

/** A counting semaphore. */
class Slots {
  #free: number;
  readonly #waiting: (() => void)[] = [];
  constructor(count: number) {
    this.#free = count;
  }
  async take(): Promise<() => void> {
    if (this.#free > 0) this.#free--;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free++;
    };
  }
}
