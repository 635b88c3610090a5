import type { Readable } from 'node:stream';
import { PaddockError } from '../errors.ts';

/** An lstat of one workspace file (a symlink is described, not followed). */
export interface EntryStats {
  mode: number;
  uid: number;
  gid: number;
  size: number;
  /** Microseconds since the epoch. */
  mtimeUs: number;
}

export interface TreeWalkNode {
  path: string;
  is_dir: boolean;
  size: number;
  children: TreeWalkNode[];
}

/** A path the workspace will not serve, with its API code. */
export interface Refused {
  refused: 'invalid_path' | 'path_not_found' | 'not_a_file';
  message: string;
}

/**
 * Every read and write inside a task's workspace. The sandbox changes the workspace while we use
 * it, so the server itself resolves no path in it: the implementation (`@paddock/sandbox`'s
 * workspace helper) works as the sandbox's user, from a descriptor of `workspaceDir`, following no
 * link the kernel would. Paths are relative to the workspace and normalized (`.` is the workspace).
 */
export interface WorkspaceFiles {
  list(
    workspaceDir: string,
    path: string,
  ): Promise<Refused | { stats: EntryStats; entries?: { name: string; stats: EntryStats }[] }>;
  tree(
    workspaceDir: string,
    path: string,
    bounds: { maxDepth: number; maxEntries: number },
  ): Promise<Refused | { root: TreeWalkNode; truncated: boolean }>;
  /** A regular file's bytes, as many as it held when opened. */
  content(workspaceDir: string, path: string): Promise<Refused | { size: number; body: Readable }>;
  /** Whether a file could land at `path` (not a directory, no way out, no file where a directory goes). */
  checkTarget(workspaceDir: string, path: string): Promise<Refused | { checked: true }>;
  /** Puts `size` bytes from `source` at `path`, whole or not at all; missing directories are made. */
  land(
    workspaceDir: string,
    file: { path: string; size: number; tempTag: string; source: Readable },
  ): Promise<Refused | { landed: EntryStats }>;
}

/** The answer, or its refusal thrown as the API error it is. */
export function accepted<T extends object>(answer: T | Refused): T {
  if ('refused' in answer) throw new PaddockError(answer.refused, answer.message);
  return answer;
}
