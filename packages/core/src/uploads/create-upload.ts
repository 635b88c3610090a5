import { type CreateUploadBody, type FileTransfer, newId, timestamp } from '@paddock/protocol';
import { insertFileTransfer } from '@paddock/store';
import { reachableThread } from '../auth/access.ts';
import type { Ctx, Services } from '../context.ts';
import { PaddockError } from '../errors.ts';
import { refuseRemoteWorkspace } from '../files/remote-workspace.ts';
import { accepted } from '../files/workspace-files.ts';
import { invalidPath, relativeToWorkspace } from '../files/workspace-path.ts';
import { ensureWorkspaceDir } from '../files/workspace-target.ts';
import { toFileTransfer } from './transfer-view.ts';
import { signUpload } from './upload-signature.ts';

/**
 * `POST /v2/tasks/{id}/files/uploads` (D12): a resumable upload of exactly `size_bytes` to `path`,
 * answered with a signed tus URL. The path is checked now, so a bad one fails before any byte.
 */
export async function createUpload(
  ctx: Ctx,
  services: Pick<
    Services,
    'uploads' | 'secrets' | 'workspaces' | 'workspacesDir' | 'workspaceFiles' | 'nodeId'
  >,
  {
    taskId,
    body,
    baseUrl,
  }: {
    taskId: string;
    body: CreateUploadBody;
    /** The server as the client reached it: the signed URL is absolute. */
    baseUrl: string;
  },
): Promise<FileTransfer> {
  const thread = await reachableThread(ctx.store.db, ctx.actor, taskId);
  await refuseRemoteWorkspace(ctx.store.db, thread);
  const { uploads } = services;
  if (body.size_bytes > uploads.maxBytes) {
    throw new PaddockError('upload_too_large', `size_bytes is over the limit of ${uploads.maxBytes} bytes`);
  }
  const path = relativeToWorkspace(body.path);
  if (path === '.') throw invalidPath(body.path, 'the path is the workspace itself, not a file');
  const workspaceDir = await ensureWorkspaceDir({ ...services, store: ctx.store }, thread);
  accepted(await services.workspaceFiles.checkTarget(workspaceDir, path));
  const id = newId();
  const nowMs = ctx.clock.now();
  const expiresMs = nowMs + uploads.accessTtlMs;
  // The transfer's id is its key in the upload store, so the tus URL names both.
  await uploads.store.create(id, body.size_bytes);
  const at = timestamp(new Date(nowMs));
  const row = {
    id,
    thread_id: thread.id,
    path,
    size_bytes: body.size_bytes,
    status: 'pending_upload',
    bytes_transferred: 0,
    bucket: uploads.store.bucket,
    object_key: id,
    stored: 1,
    error_code: null,
    error: null,
    entry: null,
    expires_at: timestamp(new Date(expiresMs)),
    created_at: at,
    updated_at: at,
    closed_at: null,
  };
  try {
    await insertFileTransfer(ctx.store.db, row);
  } catch (error) {
    await uploads.store.remove(id).catch(() => {});
    throw error;
  }
  return toFileTransfer(row, signUpload(services.secrets, { id, baseUrl, expiresMs }));
}
