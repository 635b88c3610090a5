import type { Stats } from 'node:fs';
import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { type FileEntry, timestamp } from '@paddock/protocol';

/** The file entry (spec: File entry) of a workspace path; `relative` is its path under `/workspace`. */
export async function fileEntry(absolute: string, relative: string): Promise<FileEntry> {
  const stat = await lstat(absolute);
  return {
    name: path.posix.basename(relative),
    path: relative,
    is_dir: stat.isDirectory(),
    size: stat.size,
    mod_time: timestamp(stat.mtime),
    mode: (stat.mode & 0o7777).toString(8).padStart(4, '0'),
    permissions: permissions(stat),
    // Numeric: the ids are the sandbox's, whose names the host need not know.
    owner: String(stat.uid),
    group: String(stat.gid),
  };
}

/** `ls -l` style, e.g. `-rw-r--r--`. */
function permissions(stat: Stats): string {
  const type = stat.isDirectory() ? 'd' : stat.isSymbolicLink() ? 'l' : '-';
  let bits = '';
  for (const shift of [6, 3, 0]) {
    const triplet = (stat.mode >> shift) & 0o7;
    bits += `${triplet & 4 ? 'r' : '-'}${triplet & 2 ? 'w' : '-'}${triplet & 1 ? 'x' : '-'}`;
  }
  return type + bits;
}
