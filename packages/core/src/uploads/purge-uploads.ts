import { timestamp } from '@paddock/protocol';
import { claimTransferPurge, listPurgeableTransfers } from '@paddock/store';
import type { Services } from '../context.ts';

/**
 * Drops the bytes the upload store keeps past the retention (D10): those of cancelled, failed and
 * completed transfers, and those of uploads whose signed URL lapsed that long ago without their
 * completing, which become `expired`. A cancelled transfer stays `cancelled`. Answers how many were
 * purged. Each one is claimed in the store first, so one renewed or completed meanwhile is spared.
 */
export async function purgeUploads({
  services,
  nowMs,
}: {
  services: Services;
  nowMs: number;
}): Promise<number> {
  const cutoff = timestamp(new Date(nowMs - services.uploads.retentionMs));
  let purged = 0;
  for (const row of await listPurgeableTransfers(services.store.db, cutoff)) {
    if (!(await claimTransferPurge(services.store.db, row.id, cutoff, timestamp()))) continue;
    await services.uploads.store.remove(row.object_key);
    purged++;
  }
  return purged;
}
