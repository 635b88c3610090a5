/**
 * What the server asks of the workspace helper (`main.ts`), one request at a time, and what it
 * answers (a download's bytes follow its `content` answer, then `done` or `failed`). Paths are relative to the workspace, `/`-separated and normalized
 * (`.` for the workspace itself): the helper never sees a host path.
 */
export type WorkspaceRequest =
  | { op: 'list'; path: string }
  | { op: 'tree'; path: string; maxDepth: number; maxEntries: number }
  | { op: 'content'; path: string }
  | { op: 'check-target'; path: string }
  | { op: 'land'; path: string; size: number; tempTag: string };

/** An lstat of one file, as plain numbers (a symlink is described, not followed). */
export interface EntryStats {
  mode: number;
  uid: number;
  gid: number;
  size: number;
  /** Modification time in microseconds since the epoch. */
  mtimeUs: number;
}

export interface TreeWalkNode {
  path: string;
  is_dir: boolean;
  size: number;
  children: TreeWalkNode[];
}

/** Why a path was refused; the codes are the API's own. */
export type RefusalCode = 'invalid_path' | 'path_not_found' | 'not_a_file';

export interface Refused {
  refused: RefusalCode;
  message: string;
}

export type WorkspaceAnswer =
  | Refused
  /** An unexpected failure: the errno code only (the message may name paths of the helper). */
  | { failed: string; message: string }
  | { list: { stats: EntryStats; entries?: { name: string; stats: EntryStats }[] } }
  | { tree: { root: TreeWalkNode; truncated: boolean } }
  | { content: { size: number } }
  | { done: true }
  | { checked: true }
  | { landed: EntryStats };
