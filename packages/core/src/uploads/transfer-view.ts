import type { FileEntry, FileTransfer, FileTransferStatus } from '@paddock/protocol';
import type { FileTransferRow } from '@paddock/store';
import type { SignedUpload } from './upload-signature.ts';

/**
 * A transfer as the API answers it. `upload` (the signed URL) is given only by the verbs that need
 * `publish` (create, authorize), so a read-only credential never sees a URL that writes.
 */
export function toFileTransfer(row: FileTransferRow, signed?: SignedUpload): FileTransfer {
  return {
    id: row.id,
    task_id: row.thread_id,
    direction: 'upload',
    path: row.path,
    size_bytes: row.size_bytes,
    status: row.status as FileTransferStatus,
    bytes_transferred: row.bytes_transferred,
    stored: row.stored === 1,
    error_code: row.error_code,
    error: row.error,
    entry: row.entry ? (JSON.parse(row.entry) as FileEntry) : null,
    upload: signed
      ? {
          bucket: row.bucket,
          object_key: row.object_key,
          endpoint: signed.endpoint,
          signature: signed.signature,
          expires_at: signed.expiresAt,
        }
      : null,
    download_url: null,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
