import path from 'node:path';
import { type FileEntry, microsTimestamp } from '@paddock/protocol';
import { accountNames } from './account-names.ts';
import type { EntryStats } from './workspace-files.ts';

/** The file entry of `stats` (from lstat: a symlink is described, not followed). */
export async function fileEntry(relativePath: string, stats: EntryStats): Promise<FileEntry> {
  const { mode } = stats;
  return {
    name: nameOf(relativePath),
    path: relativePath,
    is_dir: isDirectory(mode),
    size: stats.size,
    mod_time: microsTimestamp(stats.mtimeUs),
    mode: modeString(mode),
    permissions: (mode & 0o7777).toString(8).padStart(4, '0'),
    ...(await accountNames(stats.uid, stats.gid)),
  };
}

export function isDirectory(mode: number): boolean {
  return (mode & 0o170000) === 0o040000;
}

/** The name of a path relative to the workspace; the workspace itself is `workspace` (its name in the sandbox). */
export function nameOf(relativePath: string): string {
  return relativePath === '.' ? 'workspace' : path.posix.basename(relativePath);
}

/** A child's path relative to the workspace. */
export function childPath(parent: string, name: string): string {
  return parent === '.' ? name : `${parent}/${name}`;
}

const typeLetters: [number, string][] = [
  [0o040000, 'd'],
  [0o120000, 'l'],
  [0o010000, 'p'],
  [0o140000, 's'],
  [0o020000, 'c'],
  [0o060000, 'b'],
];

/** The mode as `ls -l` shows it: type letter, then rwx for owner, group, others with s/S/t/T. */
function modeString(mode: number): string {
  const type = typeLetters.find(([bits]) => (mode & 0o170000) === bits)?.[1] ?? '-';
  const triple = (shift: number, special: number, letter: string) => {
    const bits = (mode >> shift) & 7;
    const x = bits & 1;
    const exec = mode & special ? (x ? letter : letter.toUpperCase()) : x ? 'x' : '-';
    return `${bits & 4 ? 'r' : '-'}${bits & 2 ? 'w' : '-'}${exec}`;
  };
  return `${type}${triple(6, 0o4000, 's')}${triple(3, 0o2000, 's')}${triple(0, 0o1000, 't')}`;
}
