import type { FileEntry, FileList } from '@paddock/protocol';
import { admitFileRead, type FileRead } from './admit-file-read.ts';
import { readEntries } from './directory-entries.ts';
import { childPath, fileEntry } from './file-entry.ts';
import { locate, openConfined, relativeToWorkspace } from './workspace-path.ts';

/**
 * `GET /v2/tasks/{id}/files`: the entries of a directory of the workspace, sorted by name; for a
 * file, its own entry (as `ls` does). Symlinks are entries, never followed. A workspace no boot
 * has made yet reads as empty.
 */
export async function listFiles({ ctx, taskId, path }: FileRead): Promise<FileList> {
  const workspace = await admitFileRead(ctx, taskId);
  if (!workspace.exists && relativeToWorkspace(path) === '.') return { path: '.', items: [] };
  const located = await locate(workspace.dir, path);
  const { handle, stats } = await openConfined(workspace.dir, located);
  try {
    if (!stats.isDirectory()) return { path: located.path, items: [await fileEntry(located.path, stats)] };
    const items: FileEntry[] = [];
    for (const [name, entry] of await readEntries(handle)) {
      items.push(await fileEntry(childPath(located.path, name), entry));
    }
    return { path: located.path, items };
  } finally {
    await handle.close();
  }
}
