import { type FileTransfer, timestamp } from '@paddock/protocol';
import { closeFileTransfer, recordTransferBytes } from '@paddock/store';
import type { Ctx, Services } from '../context.ts';
import { uploadNotActive } from './authorize-upload.ts';
import { reachableTransfer, type TransferArgs } from './get-upload.ts';
import { toFileTransfer } from './transfer-view.ts';

/**
 * `DELETE /v2/tasks/{id}/files/uploads/{transfer_id}`: the upload takes no more bytes; what it
 * received is kept for the retention (D10), then purged. Cancelling a cancelled upload answers it
 * again; one that completed, failed or expired cannot be cancelled (409).
 */
export async function cancelUpload(
  ctx: Ctx,
  services: Pick<Services, 'uploads'>,
  { taskId, transferId }: TransferArgs,
): Promise<FileTransfer> {
  const current = await reachableTransfer(ctx, taskId, transferId);
  const at = timestamp(new Date(ctx.clock.now()));
  if (current.status === 'cancelled') return toFileTransfer(current);
  // The record keeps what was received, for the client deciding whether to start again.
  const offset = await services.uploads.store.offset(current.object_key);
  if (offset !== undefined) await recordTransferBytes(ctx.store.db, transferId, offset, at);
  const cancelled = await closeFileTransfer(ctx.store.db, transferId, {
    status: 'cancelled',
    at,
  });
  if (!cancelled) throw uploadNotActive((await reachableTransfer(ctx, taskId, transferId)).status);
  return toFileTransfer(cancelled);
}
