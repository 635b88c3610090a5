import { createHash } from 'node:crypto';
import type { ComponentFile } from '@paddock/protocol';
import { canonicalJson } from '../agents/normalize-spec.ts';

/** Files in path order, the order they are stored, shown and hashed in. */
export function sortedFiles(files: readonly ComponentFile[]): ComponentFile[] {
  return [...files]
    .map(({ path, content }) => ({ path, content }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** A component's content hash: SHA-256 (hex) of the canonical JSON of its type, name and sorted files. */
export function componentHash(type: string, name: string, files: readonly ComponentFile[]): string {
  return createHash('sha256')
    .update(canonicalJson({ type, name, files: sortedFiles(files) }))
    .digest('hex');
}
