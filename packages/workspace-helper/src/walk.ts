import {
  type BigIntStats,
  closeSync,
  constants,
  fstatSync,
  mkdirSync,
  openSync,
  readlinkSync,
} from 'node:fs';
import { notAFile, notFound, outside, Refusal } from './refusal.ts';
import type { EntryStats, RefusalCode } from './requests.ts';

/** The workspace directory: opened by the server, inherited as this descriptor. */
export const workspaceFd = 3;

/** As the kernel's own limit on symlinks in one lookup. */
const maxLinks = 40;
/** Never through a final symlink; a FIFO must not block the open, nor a terminal become ours. */
const openFlags = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

/**
 * The entry `name` of an open directory. Node has no openat: the kernel resolves
 * `/proc/self/fd/<fd>` to the directory itself, so only `name`, a single component, is looked up.
 */
export function through(dirFd: number, name: string): string {
  if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0')) {
    throw new Error(`not a single path component: ${JSON.stringify(name)}`);
  }
  return `/proc/self/fd/${dirFd}/${name}`;
}

/** The open directory itself, for readdir. */
export function itself(dirFd: number): string {
  return `/proc/self/fd/${dirFd}/`;
}

/** A normalized workspace path as components; `.` is none. */
export function components(path: string): string[] {
  if (path.includes('\0')) throw outside(path, 'the path contains a NUL byte');
  const names = path.split('/').filter((name) => name !== '' && name !== '.');
  // The server normalizes paths; a `..` that reaches here was never one of its paths.
  if (names.includes('..')) throw outside(path);
  return names;
}

export interface WalkOptions {
  /** Make missing directories (mode 0755) instead of refusing the path. */
  make?: boolean;
  /** The refusal when a component that must be a directory is something else. */
  fileInTheWay?: RefusalCode;
}

export interface Opened {
  fd: number;
  stats: BigIntStats;
}

export function entryStats(stats: BigIntStats): EntryStats {
  return {
    mode: Number(stats.mode),
    uid: Number(stats.uid),
    gid: Number(stats.gid),
    size: Number(stats.size),
    mtimeUs: Number(stats.mtimeNs / 1000n),
  };
}

/**
 * A walk down from the workspace's descriptor, one component at a time, each opened through its
 * parent's descriptor with O_NOFOLLOW: whatever the sandbox swaps in meanwhile, every directory the
 * walk holds is one that was reached inside the workspace. A symlink met on the way is followed
 * only by the walk itself (its target read, then walked from the link's directory): an absolute
 * target, a `..` above the workspace, a loop or a dangling link is `invalid_path`.
 */
export class Walk {
  readonly #dirs: number[] = [workspaceFd];
  #links = 0;

  /** The path requested, for messages. */
  readonly path: string;
  readonly options: WalkOptions;

  constructor(path: string, options: WalkOptions = {}) {
    this.path = path;
    this.options = options;
  }

  /** The directory the walk stands in. */
  get dir(): number {
    return this.#dirs[this.#dirs.length - 1]!;
  }

  /** Goes down through the directories `names`. */
  enter(names: string[], viaLink = false): void {
    for (const name of names) {
      if (name === '..') {
        this.#up();
        continue;
      }
      const opened = this.#open(name, viaLink, this.options.make === true && !viaLink);
      if ('link' in opened) {
        this.enter(this.#linkNames(opened.link), true);
        continue;
      }
      if (!opened.stats.isDirectory()) {
        closeSync(opened.fd);
        const code = this.options.fileInTheWay ?? 'path_not_found';
        throw code === 'path_not_found'
          ? notFound(this.path)
          : new Refusal(
              code,
              `a component of the path is a file, not a directory: ${JSON.stringify(this.path)}`,
            );
      }
      this.#dirs.push(opened.fd);
    }
  }

  /** Opens what `names` leads to (the caller closes it), following symlinks as `enter` does. */
  open(names: string[], viaLink = false): Opened {
    this.enter(names.slice(0, -1), viaLink);
    const last = names[names.length - 1];
    if (last === '..') this.#up();
    if (last === undefined || last === '..') {
      const fd = openSync(`${itself(this.dir)}.`, openFlags | constants.O_DIRECTORY);
      return { fd, stats: fstatSync(fd, { bigint: true }) };
    }
    const opened = this.#open(last, viaLink, false);
    return 'link' in opened ? this.open(this.#linkNames(opened.link), true) : opened;
  }

  close(): void {
    for (const fd of this.#dirs.splice(1)) closeSync(fd);
  }

  #up(): void {
    if (this.#dirs.length === 1) throw outside(this.path);
    closeSync(this.#dirs.pop()!);
  }

  #linkNames(target: string): string[] {
    if (++this.#links > maxLinks) throw outside(this.path, 'the path goes through a symlink loop');
    if (target.startsWith('/')) {
      throw outside(this.path, 'the path leads outside the workspace through a symlink');
    }
    return target.split('/').filter((name) => name !== '' && name !== '.');
  }

  #open(name: string, viaLink: boolean, make: boolean): Opened | { link: string } {
    const at = through(this.dir, name);
    for (let attempt = 0; ; attempt++) {
      try {
        const fd = openSync(at, openFlags);
        return { fd, stats: fstatSync(fd, { bigint: true }) };
      } catch (error) {
        const code = errno(error);
        if (code === 'ELOOP') {
          try {
            return { link: readlinkSync(at) };
          } catch (linkError) {
            // Swapped back to a file or directory since the open: look again.
            if (errno(linkError) === 'EINVAL' && attempt < maxLinks) continue;
            if (errno(linkError) !== 'ENOENT') throw linkError;
          }
        } else if (code === 'ENOENT' && make) {
          try {
            mkdirSync(at, 0o755);
          } catch (mkdirError) {
            if (errno(mkdirError) !== 'EEXIST') throw mkdirError;
          }
          if (attempt < maxLinks) continue;
        } else if (code === 'ENXIO') {
          throw notAFile(this.path);
        } else if (code !== 'ENOENT') {
          throw error;
        }
        throw viaLink ? outside(this.path, 'the path goes through a broken symlink') : notFound(this.path);
      }
    }
  }
}

export function errno(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}
