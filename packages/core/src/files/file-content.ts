import type { FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { lookup } from 'mime-types';
import { admitFileRead, type FileRead } from './admit-file-read.ts';
import { nameOf } from './file-entry.ts';
import { locate, notAFile, openConfined, pathNotFound, relativeToWorkspace } from './workspace-path.ts';

export interface FileContent {
  name: string;
  /** Bytes, as the file stood when it was opened; the stream sends no more than that. */
  size: number;
  /** By the name's extension; `application/octet-stream` when it names none known. */
  contentType: string;
  body: Readable;
}

/** `GET /v2/tasks/{id}/files/content`: one regular file of the workspace, streamed. */
export async function fileContent({ ctx, taskId, path }: FileRead): Promise<FileContent> {
  const workspace = await admitFileRead(ctx, taskId);
  if (!workspace.exists) throw pathNotFound(relativeToWorkspace(path));
  const located = await locate(workspace.dir, path);
  const { handle, stats } = await openConfined(workspace.dir, located);
  if (!stats.isFile()) {
    await handle.close();
    throw notAFile(located.path);
  }
  const size = Number(stats.size);
  const name = nameOf(located.path);
  return {
    name,
    size,
    contentType: lookup(name) || 'application/octet-stream',
    body: size === 0 ? emptyBody(handle) : handle.createReadStream({ start: 0, end: size - 1 }),
  };
}

/** An empty file's body (a read stream cannot be bounded to zero bytes); the descriptor is closed. */
function emptyBody(handle: FileHandle): Readable {
  void handle.close();
  return Readable.from([]);
}
