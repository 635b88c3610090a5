import { closeSync, constants, lstatSync, opendirSync, openSync, readdirSync, readSync } from 'node:fs';
import { notAFile } from './refusal.ts';
import type { EntryStats, TreeWalkNode, WorkspaceAnswer } from './requests.ts';
import { components, entryStats, errno, itself, type Opened, through, Walk } from './walk.ts';

/** Opens a path for reading, following only the symlinks the walk judges inside. */
function openPath(path: string): Opened {
  const walk = new Walk(path);
  try {
    return walk.open(components(path));
  } finally {
    walk.close();
  }
}

/** A directory's entries, sorted by name, each lstat'ed through its descriptor; one gone meanwhile is left out. */
function entriesOf(dirFd: number): { name: string; stats: EntryStats }[] {
  const entries: { name: string; stats: EntryStats }[] = [];
  for (const name of readdirSync(itself(dirFd)).sort(byName)) {
    try {
      entries.push({ name, stats: entryStats(lstatSync(through(dirFd, name), { bigint: true })) });
    } catch (error) {
      if (errno(error) !== 'ENOENT') throw error;
    }
  }
  return entries;
}

/** Code point order: the same on every host, whatever its locale. */
function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A directory's entries, or for anything else its own stats (as `ls` does). */
export function list(path: string): WorkspaceAnswer {
  const { fd, stats } = openPath(path);
  try {
    if (!stats.isDirectory()) return { list: { stats: entryStats(stats) } };
    return { list: { stats: entryStats(stats), entries: entriesOf(fd) } };
  } finally {
    closeSync(fd);
  }
}

/**
 * Breadth first from `path`, so a cut keeps the shallow entries. Directories below the root are
 * reached from the root's descriptor strictly: never through a symlink; one swapped for anything
 * else meanwhile reads as empty.
 */
export function tree(path: string, maxDepth: number, maxEntries: number): WorkspaceAnswer {
  const root = openPath(path);
  try {
    const rootNode: TreeWalkNode = {
      path,
      is_dir: root.stats.isDirectory(),
      size: Number(root.stats.size),
      children: [],
    };
    let truncated = false;
    let entries = 0;
    let level: { node: TreeWalkNode; names: string[] }[] = rootNode.is_dir
      ? [{ node: rootNode, names: [] }]
      : [];
    for (let depth = 1; level.length > 0; depth++) {
      const next: typeof level = [];
      for (const { node, names } of level) {
        for (const { name, stats } of withDirectory(root.fd, names, entriesOf) ?? []) {
          if (entries === maxEntries) return { tree: { root: rootNode, truncated: true } };
          const child: TreeWalkNode = {
            path: node.path === '.' ? name : `${node.path}/${name}`,
            is_dir: (stats.mode & 0o170000) === 0o040000,
            size: stats.size,
            children: [],
          };
          node.children.push(child);
          entries++;
          if (!child.is_dir) continue;
          if (depth < maxDepth) next.push({ node: child, names: [...names, name] });
          else if (!truncated && withDirectory(root.fd, [...names, name], hasEntries)) truncated = true;
        }
      }
      level = next;
    }
    return { tree: { root: rootNode, truncated } };
  } finally {
    closeSync(root.fd);
  }
}

/** Runs `read` on the directory `names` below `fromFd`, opened strictly (O_NOFOLLOW|O_DIRECTORY). */
function withDirectory<T>(fromFd: number, names: string[], read: (fd: number) => T): T | undefined {
  const held: number[] = [];
  try {
    let at = fromFd;
    for (const name of names) {
      at = openSync(through(at, name), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_DIRECTORY);
      held.push(at);
    }
    return read(at);
  } catch {
    return undefined;
  } finally {
    for (const fd of held) closeSync(fd);
  }
}

function hasEntries(dirFd: number): boolean {
  const dir = opendirSync(itself(dirFd));
  try {
    return dir.readSync() !== null;
  } finally {
    dir.closeSync();
  }
}

/**
 * A regular file's bytes, as many as it held when opened, to `send`; its size goes to `header`
 * first, so the server can answer before the bytes flow.
 */
export function content(
  path: string,
  header: (answer: WorkspaceAnswer) => void,
  send: (bytes: Buffer) => void,
): void {
  const { fd, stats } = openPath(path);
  try {
    if (!stats.isFile()) throw notAFile(path);
    const size = Number(stats.size);
    header({ content: { size } });
    const buffer = Buffer.allocUnsafe(64 * 1024);
    for (let sent = 0; sent < size; ) {
      const read = readSync(fd, buffer, 0, Math.min(buffer.length, size - sent), sent);
      if (read === 0) throw new Error('the file shrank while it was read');
      send(buffer.subarray(0, read));
      sent += read;
    }
  } finally {
    closeSync(fd);
  }
}
