import type { Readable } from 'node:stream';

/**
 * Where an upload's bytes wait until it completes (file store, S3), typed to what the verbs use.
 * The HTTP layer's tus server writes into the same store.
 */
export interface UploadStore {
  /** The bucket the bytes are in: `local` for the file store, else the S3 bucket's name. */
  readonly bucket: string;
  /** Makes an empty upload of exactly `size` bytes under `key`. */
  create(key: string, size: number): Promise<void>;
  /** The bytes received so far; undefined when the store holds nothing under `key`. */
  offset(key: string): Promise<number | undefined>;
  read(key: string): Promise<Readable>;
  /** Drops the bytes; nothing held is not an error. */
  remove(key: string): Promise<void>;
}

/** Upload settings and the store, built once by the server's wiring. */
export interface Uploads {
  store: UploadStore;
  /** How long a signed upload URL works. */
  accessTtlMs: number;
  /** How long the bytes of a closed or lapsed upload are kept (D10: 24 h). */
  retentionMs: number;
  /** The largest `size_bytes` accepted. */
  maxBytes: number;
  /**
   * The uid (and gid) a workspace made for an upload (before any boot) gets, as its sandbox would:
   * files land as the workspace's owner. Undefined (not root): the server's own.
   */
  fileOwner?: number;
}
