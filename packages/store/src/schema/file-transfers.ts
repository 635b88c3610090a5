import type { Generated } from 'kysely';

/** A resumable upload into a thread's workspace (D12). */
export interface FileTransfersTable {
  id: string;
  thread_id: string;
  /** Relative to the workspace, normalized. */
  path: string;
  /** bigint: PostgreSQL answers it as a string, so repositories convert. */
  size_bytes: number;
  /** `pending_upload`, `uploading`, `completed`, `cancelled`, `failed` or `expired`. */
  status: string;
  bytes_transferred: Generated<number>;
  /** The upload store's bucket (`local` for the file store) and the key of the bytes in it. */
  bucket: string;
  object_key: string;
  /** 1 while the upload store holds the transfer's bytes. */
  stored: Generated<number>;
  error_code: string | null;
  error: string | null;
  /** JSON of the file entry, once completed. */
  entry: string | null;
  /** Expiry of the newest signed upload URL. */
  expires_at: string;
  created_at: string;
  updated_at: string;
  /** When the transfer left `pending_upload`/`uploading`. */
  closed_at: string | null;
}
