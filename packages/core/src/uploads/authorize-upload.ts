import { type FileTransfer, timestamp } from '@paddock/protocol';
import { findFileTransfer, recordTransferBytes, renewTransferAccess } from '@paddock/store';
import type { Ctx, Services } from '../context.ts';
import { PaddockError } from '../errors.ts';
import { reachableTransfer, type TransferArgs, transferNotFound } from './get-upload.ts';
import { toFileTransfer } from './transfer-view.ts';
import { signUpload } from './upload-signature.ts';

/**
 * `POST /v2/tasks/{id}/files/uploads/{transfer_id}/authorize`: a freshly signed URL for an upload
 * still taking bytes, also after the last one lapsed (until the purge expires it). The status says
 * what the store holds: `pending_upload` with nothing yet, else `uploading`.
 */
export async function authorizeUpload(
  ctx: Ctx,
  services: Pick<Services, 'uploads' | 'secrets'>,
  { taskId, transferId, baseUrl }: TransferArgs & { baseUrl: string },
): Promise<FileTransfer> {
  const current = await reachableTransfer(ctx, taskId, transferId);
  const nowMs = ctx.clock.now();
  const at = timestamp(new Date(nowMs));
  const expiresMs = nowMs + services.uploads.accessTtlMs;
  const renewed = await renewTransferAccess(ctx.store.db, transferId, timestamp(new Date(expiresMs)), at);
  if (!renewed) throw uploadNotActive(current.status);
  const offset = await services.uploads.store.offset(renewed.object_key);
  if (offset !== undefined) await recordTransferBytes(ctx.store.db, transferId, offset, at);
  const row = await findFileTransfer(ctx.store.db, transferId);
  if (!row) throw transferNotFound();
  return toFileTransfer(row, signUpload(services.secrets, { id: transferId, baseUrl, expiresMs }));
}

export function uploadNotActive(status: string): PaddockError {
  return new PaddockError('upload_not_active', `upload is ${status}; it takes no more bytes`, {
    extra: { status },
  });
}
