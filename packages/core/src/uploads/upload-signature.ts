import { timingSafeEqual } from 'node:crypto';
import { timestamp, tusUploadPath } from '@paddock/protocol';
import type { SecretBox } from '../crypto/secret-box.ts';
import { PaddockError } from '../errors.ts';

/** A signed upload URL and what it is made of. */
export interface SignedUpload {
  endpoint: string;
  signature: string;
  expiresAt: string;
}

/**
 * The signature of an upload URL: an HMAC under the deployment's secret key over the transfer and
 * the expiry, so the URL grants writing to that one upload until then and nothing else. The label
 * keeps it apart from the box's other digests.
 */
function sign(secrets: SecretBox, transferId: string, expiresMs: number): string {
  return secrets.digest(`paddock-upload-url\n${transferId}\n${expiresMs}`);
}

export function signUpload(
  secrets: SecretBox,
  transfer: { id: string; baseUrl: string; expiresMs: number },
): SignedUpload {
  const signature = sign(secrets, transfer.id, transfer.expiresMs);
  const url = new URL(`${tusUploadPath}/${transfer.id}`, transfer.baseUrl);
  url.searchParams.set('expires', String(transfer.expiresMs));
  url.searchParams.set('signature', signature);
  return { endpoint: url.toString(), signature, expiresAt: timestamp(new Date(transfer.expiresMs)) };
}

/**
 * Refuses an upload request whose URL is unsigned (401), signed wrongly (403) or lapsed (403). The
 * signature is checked before the expiry, so a forged URL learns nothing about the transfer.
 */
export function checkUploadSignature(
  secrets: SecretBox,
  request: { transferId: string; expires?: string; signature?: string; nowMs: number },
): void {
  if (!request.expires || !request.signature) {
    throw new PaddockError(
      'upload_signature_required',
      'upload URL lacks its expires and signature parameters; use upload.endpoint as answered',
    );
  }
  const expiresMs = /^\d{1,16}$/.test(request.expires) ? Number(request.expires) : Number.NaN;
  const expected = Number.isNaN(expiresMs) ? '' : sign(secrets, request.transferId, expiresMs);
  const given = Buffer.from(request.signature);
  if (expected === '' || given.length !== expected.length || !timingSafeEqual(given, Buffer.from(expected))) {
    throw new PaddockError('upload_signature_invalid', 'upload signature does not match this upload URL');
  }
  if (request.nowMs >= expiresMs) {
    throw new PaddockError(
      'upload_signature_expired',
      `upload URL expired at ${timestamp(new Date(expiresMs))}; POST …/authorize for a fresh one`,
    );
  }
}
