import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  fsyncSync,
  lstatSync,
  openSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { outside } from './refusal.ts';
import type { WorkspaceAnswer } from './requests.ts';
import { components, entryStats, errno, through, Walk } from './walk.ts';

/** The file's parent directories (made when `make`), and its own name there. */
function target(path: string, make: boolean): { walk: Walk; name: string } {
  const names = components(path);
  const name = names.pop();
  if (name === undefined) throw outside(path, 'the path is the workspace itself, not a file');
  const walk = new Walk(path, { make, fileInTheWay: 'invalid_path' });
  try {
    walk.enter(names);
    if (lstatSync(through(walk.dir, name), { throwIfNoEntry: false })?.isDirectory()) {
      throw outside(path, 'the path is a directory, not a file');
    }
    return { walk, name };
  } catch (error) {
    walk.close();
    throw error;
  }
}

/** Whether a file could land at `path`: a missing parent will be made, a file in its place is refused. */
export function checkTarget(path: string): WorkspaceAnswer {
  try {
    target(path, false).walk.close();
  } catch (error) {
    if ((error as { code?: string }).code !== 'path_not_found') throw error;
  }
  return { checked: true };
}

/**
 * Puts the bytes read from `input` at `path`, whole or not at all: into a temporary file beside the
 * target (the same directory descriptor, so the same filesystem), flushed, checked for size, then
 * renamed over the name. rename(2) never follows the final component, so a symlink there is
 * replaced, not written through. Missing parent directories are made.
 */
export function land(
  path: string,
  size: number,
  tempTag: string,
  /** The next piece of the upload; null at its end. */
  next: () => Buffer | null,
): WorkspaceAnswer {
  if (!/^[0-9A-Za-z-]+$/.test(tempTag)) throw new Error('bad temporary file tag');
  const { walk, name } = target(path, true);
  const temp = through(walk.dir, `.paddock-upload-${tempTag}`);
  try {
    // A leftover of an earlier try goes first (unlink removes a link, never what it points at).
    try {
      unlinkSync(temp);
    } catch (error) {
      if (errno(error) !== 'ENOENT') throw error;
    }
    // O_EXCL: created here and now, never an entry planted since.
    const fd = openSync(
      temp,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o644,
    );
    try {
      let written = 0;
      for (let piece = next(); piece !== null; piece = next()) {
        for (let at = 0; at < piece.length; ) at += writeSync(fd, piece, at, piece.length - at);
        written += piece.length;
        if (written > size) break;
      }
      if (written !== size) {
        throw new Error(`upload holds ${written > size ? `more than ${size}` : written} bytes, not ${size}`);
      }
      fchmodSync(fd, 0o644);
      fsyncSync(fd);
      renameSync(temp, through(walk.dir, name));
      return { landed: entryStats(fstatSync(fd, { bigint: true })) };
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    try {
      unlinkSync(temp);
    } catch {}
    throw error;
  } finally {
    walk.close();
  }
}
