import type { FileEntry, FileList } from '@paddock/protocol';
import type { Ctx } from '../context.ts';
import { admitFileRead, type FileRead, type FileServices } from './admit-file-read.ts';
import { childPath, fileEntry } from './file-entry.ts';
import { accepted } from './workspace-files.ts';
import { pathNotFound, relativeToWorkspace } from './workspace-path.ts';

/**
 * `GET /v2/tasks/{id}/files`: the entries of a directory of the workspace, sorted by name; for a
 * file, its own entry (as `ls` does). Symlinks are entries, never followed. A workspace no boot
 * has made yet reads as empty.
 */
export async function listFiles(
  ctx: Ctx,
  services: FileServices,
  { taskId, path }: FileRead,
): Promise<FileList> {
  const workspace = await admitFileRead(ctx, services, taskId);
  const relative = relativeToWorkspace(path);
  if (!workspace.exists && relative === '.') return { path: '.', items: [] };
  if (!workspace.exists) throw pathNotFound(relative);
  const listed = accepted(await services.workspaceFiles.list(workspace.dir, relative));
  if (!listed.entries) return { path: relative, items: [await fileEntry(relative, listed.stats)] };
  const items: FileEntry[] = [];
  for (const { name, stats } of listed.entries) items.push(await fileEntry(childPath(relative, name), stats));
  return { path: relative, items };
}
