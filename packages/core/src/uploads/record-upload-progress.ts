import { timestamp } from '@paddock/protocol';
import { findFileTransfer, recordTransferBytes } from '@paddock/store';
import type { Services } from '../context.ts';

/** After a tus PATCH (finished or cut off): the transfer records what the store now holds. */
export async function recordUploadProgress({
  services,
  transferId,
}: {
  services: Services;
  transferId: string;
}): Promise<void> {
  const row = await findFileTransfer(services.store.db, transferId);
  if (!row) return;
  const offset = await services.uploads.store.offset(row.object_key);
  if (offset !== undefined) await recordTransferBytes(services.store.db, transferId, offset, timestamp());
}
