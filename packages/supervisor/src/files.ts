import {
  closeSync,
  type Dirent,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { SandboxFileEntry, SupervisorAnswers, SupervisorRequest } from '@paddock/protocol';
import { containedEntry, containedPath } from './contained-path.ts';

type FileRequest<Op extends string> = Extract<SupervisorRequest, { op: Op }>;

/** A listing stops here; `total` says how many there were. */
const maxEntries = 1000;

// Every operation is synchronous: the supervisor is root again for a moment whenever it starts a
// process (see sandbox-user.ts), and no file operation may be in flight on another thread then.

/** Up to `max_bytes` of the file from its start, and its whole size. */
export function readFile(request: FileRequest<'file.read'>): SupervisorAnswers['file.read'] {
  const fd = openSync(containedPath(request.within, request.path), 'r');
  try {
    const { size } = fstatSync(fd);
    const buffer = Buffer.alloc(Math.min(size, request.max_bytes));
    let read = 0;
    while (read < buffer.length) {
      const got = readSync(fd, buffer, read, buffer.length - read, read);
      if (got === 0) break;
      read += got;
    }
    return { data: buffer.subarray(0, read).toString('base64'), size };
  } finally {
    closeSync(fd);
  }
}

let temporaries = 0;

/**
 * Writes the whole file through a temporary one beside it, renamed into place: a reader sees the old
 * content or the new, never half of it, and a link at the path is replaced, not followed. An existing
 * file keeps its mode unless one is given.
 */
export function writeFile(request: FileRequest<'file.write'>): SupervisorAnswers['file.write'] {
  const target = containedPath(request.within, request.path);
  mkdirSync(dirname(target), { recursive: true });
  // The parents may have been made through a link made meanwhile: judged again.
  containedPath(request.within, request.path);
  const mode = request.mode ?? existingMode(target) ?? 0o644;
  const temporary = join(dirname(target), `.${basename(target)}.paddock-${process.pid}-${++temporaries}`);
  writeFileSync(temporary, Buffer.from(request.data, 'base64'), { mode, flag: 'wx' });
  try {
    renameSync(temporary, target);
  } catch (error) {
    unlinkSync(temporary);
    throw error;
  }
  return {};
}

function existingMode(path: string): number | undefined {
  try {
    const stat = lstatSync(path);
    return stat.isFile() ? stat.mode & 0o777 : undefined;
  } catch {
    return undefined;
  }
}

/** The directory's entries by name, each with its type and size (links not followed). */
export function listDirectory(request: FileRequest<'file.list'>): SupervisorAnswers['file.list'] {
  const dir = containedPath(request.within, request.path);
  const dirents = readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name));
  const entries = dirents.slice(0, maxEntries).map((dirent): SandboxFileEntry => {
    let size = 0;
    try {
      size = lstatSync(join(dir, dirent.name)).size;
    } catch {
      // Gone while we looked.
    }
    return { name: dirent.name, type: entryType(dirent), size };
  });
  return { entries, total: dirents.length };
}

/** What is at the path, links followed (inside `within`). */
export function statFile(request: FileRequest<'file.stat'>): SupervisorAnswers['file.stat'] {
  const stat = statSync(containedPath(request.within, request.path));
  return { type: stat.isFile() ? 'file' : stat.isDirectory() ? 'directory' : 'other', size: stat.size };
}

/** Removes what is at the path (a directory with everything in it); nothing there is no error. */
export function removeFile(request: FileRequest<'file.remove'>): SupervisorAnswers['file.remove'] {
  rmSync(containedEntry(request.within, request.path), { recursive: true, force: true });
  return {};
}

/** A link at the path to `target`, replacing what was there; its parents made. */
export function makeSymlink(request: FileRequest<'file.symlink'>): SupervisorAnswers['file.symlink'] {
  const parent = dirname(resolve(request.within, request.path));
  mkdirSync(containedPath(request.within, parent), { recursive: true });
  const target = containedEntry(request.within, request.path);
  rmSync(target, { recursive: true, force: true });
  symlinkSync(request.target, target);
  return {};
}

function entryType(dirent: Dirent): SandboxFileEntry['type'] {
  if (dirent.isFile()) return 'file';
  if (dirent.isDirectory()) return 'directory';
  if (dirent.isSymbolicLink()) return 'symlink';
  return 'other';
}
