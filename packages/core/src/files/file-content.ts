import type { Readable } from 'node:stream';
import { lookup } from 'mime-types';
import type { Ctx } from '../context.ts';
import { admitFileRead, type FileRead, type FileServices } from './admit-file-read.ts';
import { nameOf } from './file-entry.ts';
import { accepted } from './workspace-files.ts';
import { pathNotFound, relativeToWorkspace } from './workspace-path.ts';

export interface FileContent {
  name: string;
  /** Bytes, as the file stood when it was opened; the stream sends no more than that. */
  size: number;
  /** By the name's extension; `application/octet-stream` when it names none known. */
  contentType: string;
  body: Readable;
}

/** `GET /v2/tasks/{id}/files/content`: one regular file of the workspace, streamed. */
export async function fileContent(
  ctx: Ctx,
  services: FileServices,
  { taskId, path }: FileRead,
): Promise<FileContent> {
  const workspace = await admitFileRead(ctx, services, taskId);
  const relative = relativeToWorkspace(path);
  if (!workspace.exists) throw pathNotFound(relative);
  const { size, body } = accepted(await services.workspaceFiles.content(workspace.dir, relative));
  const name = nameOf(relative);
  return { name, size, contentType: lookup(name) || 'application/octet-stream', body };
}
