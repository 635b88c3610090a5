import { activeTransferStatuses, findFileTransfer } from '@paddock/store';
import type { Services } from '../context.ts';
import { PaddockError } from '../errors.ts';
import { transferNotFound } from './get-upload.ts';
import { checkUploadSignature } from './upload-signature.ts';

/** What a signed tus request may do: write to an active upload, or learn that it completed. */
export type TusAccess = { kind: 'active'; objectKey: string } | { kind: 'completed'; size: number };

/**
 * Admits a request on a presigned tus URL, before any byte of it is read: the signature must be
 * right and unexpired, and the upload active (or completed, which a client resuming after a lost
 * last response learns from its HEAD). No bearer token: the URL is the credential.
 */
export async function openTusUpload({
  services,
  transferId,
  expires,
  signature,
}: {
  services: Services;
  transferId: string;
  expires?: string;
  signature?: string;
}): Promise<TusAccess> {
  checkUploadSignature(services.secrets, { transferId, expires, signature, nowMs: Date.now() });
  const row = await findFileTransfer(services.store.db, transferId);
  if (!row) throw transferNotFound();
  if ((activeTransferStatuses as readonly string[]).includes(row.status)) {
    return { kind: 'active', objectKey: row.object_key };
  }
  if (row.status === 'completed') return { kind: 'completed', size: row.size_bytes };
  throw new PaddockError('upload_gone', `upload is ${row.status}; it takes no more bytes`, {
    extra: { status: row.status },
  });
}
