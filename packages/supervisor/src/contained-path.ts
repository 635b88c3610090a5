import { lstatSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

/** A path the request may not use: it leaves its directory, or cannot be judged. */
export class PathRefused extends Error {
  readonly code = 'path_refused';
}

/**
 * Resolves `path` (absolute, or relative to `within`) and refuses it unless it stays in `within`,
 * through links too: the nearest part of it that exists must lie there once every link is followed,
 * since that is where the rest would be made. Runs as the sandbox's user, so this is the tools'
 * rule, not the sandbox's wall: what it refuses the user could reach anyway.
 */
export function containedPath(within: string, path: string): string {
  // A NUL byte would be cut by the system call: what is checked would not be what is opened.
  if (path.includes('\0') || within.includes('\0')) throw new PathRefused('the path holds a NUL byte');
  const root = resolve(within);
  const target = resolve(root, path);
  if (!isWithin(root, target)) throw new PathRefused(`${path} is outside ${within}`);
  const realRoot = realpathSync(root);
  let probe = target;
  for (;;) {
    try {
      lstatSync(probe);
    } catch (error) {
      if (isMissing(error) && probe !== root) {
        probe = dirname(probe);
        continue;
      }
      throw error;
    }
    let real: string;
    try {
      real = realpathSync(probe);
    } catch {
      throw new PathRefused(`${path} goes through a broken link`);
    }
    if (!isWithin(realRoot, real)) throw new PathRefused(`${path} leads outside ${within} through a link`);
    return target;
  }
}

/**
 * The path of an entry to replace or remove itself, a link not followed: the path must stay in
 * `within` by name, and its parent through links too. The directory itself is no entry of its own.
 */
export function containedEntry(within: string, path: string): string {
  const root = resolve(within);
  const target = resolve(root, path);
  if (target === root) throw new PathRefused(`${path} is ${within} itself`);
  if (!isWithin(root, target)) throw new PathRefused(`${path} is outside ${within}`);
  return join(containedPath(within, dirname(target)), basename(target));
}

/** Whether `candidate` is `root` or lies below it (both absolute and normalized). */
export function isWithin(root: string, candidate: string): boolean {
  const rel = relative(root, candidate);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** A missing file, or a path through something that is not a directory. */
export function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
