import type { CreateUploadBody, FileTransfer } from '@paddock/protocol';
import type { PreviousUpload, Upload, UrlStorage } from 'tus-js-client';
import { PaddockError } from './errors.ts';
import type { CallOptions, Transport } from './http.ts';

export type { PreviousUpload, UrlStorage } from 'tus-js-client';

/** What `tus-js-client` takes as a file in this environment (a `Buffer` in Node, a `Blob` in browsers). */
export type TusInput = ConstructorParameters<typeof Upload>[0];

/** The bytes of an upload: a `Blob`/`File`, bytes, or anything `tus-js-client` reads here. */
export type UploadSource = Blob | Uint8Array | TusInput;

export interface UploadFileOptions extends CallOptions {
  /** Where the file lands in the task's workspace, relative to `/workspace`. */
  path: string;
  /** The size in bytes; needed only when the source does not tell it (a stream). */
  size?: number;
  /**
   * Where unfinished uploads are remembered, so a later call for the same file resumes the same
   * transfer from the offset the server holds. Default: memory (resumes within this process);
   * `fileUrlStorage` of `@paddock/sdk/node` survives the process.
   */
  urlStorage?: UrlStorage;
  /** What identifies the content beyond task, path and size (e.g. a local file's path and mtime). */
  fingerprint?: string;
  /** Bytes per PATCH (default: one request for the rest). */
  chunkSize?: number;
  onProgress?: (bytesSent: number, bytesTotal: number) => void;
}

/** Unfinished uploads kept in memory: the default `urlStorage`. */
export function memoryUrlStorage(): UrlStorage {
  const entries = new Map<string, PreviousUpload>();
  let next = 0;
  return {
    findAllUploads: async () => [...entries.values()],
    findUploadsByFingerprint: async (fingerprint) =>
      [...entries.values()].filter((u) => u.urlStorageKey.startsWith(`tus::${fingerprint}::`)),
    removeUpload: async (key) => void entries.delete(key),
    addUpload: async (fingerprint, upload) => {
      const key = `tus::${fingerprint}::${next++}`;
      entries.set(key, { ...upload, urlStorageKey: key });
      return key;
    },
  };
}

const sharedMemory = memoryUrlStorage();

function sizeOf(source: UploadSource, given: number | undefined): number {
  if (given !== undefined) return given;
  if (source instanceof Uint8Array) return source.byteLength;
  if (typeof Blob !== 'undefined' && source instanceof Blob) return source.size;
  throw new TypeError('give `size` for an upload source that does not tell its own');
}

/** The source as this environment's tus client reads it: bytes are a `Buffer` where there is one. */
async function tusInput(source: UploadSource): Promise<TusInput> {
  const NodeBuffer = (globalThis as { Buffer?: typeof Buffer }).Buffer;
  if (source instanceof Uint8Array) {
    return NodeBuffer
      ? NodeBuffer.from(source.buffer, source.byteOffset, source.byteLength)
      : new Blob([source.slice()]);
  }
  if (NodeBuffer && typeof Blob !== 'undefined' && source instanceof Blob) {
    return NodeBuffer.from(await source.arrayBuffer());
  }
  return source as TusInput;
}

const resumable = new Set<FileTransfer['status']>(['pending_upload', 'uploading']);

/** The transfers API `uploadFile` needs (the client's `uploads`). */
export interface TransferApi {
  create(taskId: string, body: CreateUploadBody, options?: CallOptions): Promise<FileTransfer>;
  get(taskId: string, transferId: string, options?: CallOptions): Promise<FileTransfer>;
  authorize(taskId: string, transferId: string, options?: CallOptions): Promise<FileTransfer>;
}

/**
 * An unfinished transfer of this file remembered in `storage`, renewed (a fresh signed URL), or a
 * completed one; entries that can no longer resume are dropped.
 */
async function previousTransfer(
  api: TransferApi,
  storage: UrlStorage,
  key: string,
  taskId: string,
  options: CallOptions,
): Promise<{ transfer: FileTransfer; storageKey: string } | undefined> {
  const previous = await storage.findUploadsByFingerprint(key);
  for (const entry of previous.reverse()) {
    const transferId = entry.metadata.transfer_id;
    try {
      if (!transferId) throw new Error('not an upload of this SDK');
      const transfer = await api.get(taskId, transferId, options);
      if (transfer.status === 'completed') return { transfer, storageKey: entry.urlStorageKey };
      if (resumable.has(transfer.status)) {
        return {
          transfer: await api.authorize(taskId, transferId, options),
          storageKey: entry.urlStorageKey,
        };
      }
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      if (error instanceof PaddockError && error.retryable) throw error;
    }
    await storage.removeUpload(entry.urlStorageKey);
  }
  return undefined;
}

/** tus-js-client is loaded with the first upload: a browser page that never uploads never fetches it. */
async function sendBytes(
  input: TusInput,
  endpoint: string,
  size: number,
  options: UploadFileOptions,
): Promise<void> {
  const { Upload } = await import('tus-js-client');
  return new Promise((resolve, reject) => {
    const { signal } = options;
    if (signal?.aborted) return reject(signal.reason);
    const upload = new Upload(input, {
      uploadUrl: endpoint,
      uploadSize: size,
      // tus takes an explicit `undefined` for a size: only a given one is passed.
      ...(options.chunkSize === undefined ? {} : { chunkSize: options.chunkSize }),
      retryDelays: [0, 1000, 3000, 5000],
      storeFingerprintForResuming: false,
      onProgress: options.onProgress ?? null,
      onSuccess: () => done(resolve),
      onError: (error) => done(() => reject(error)),
    });
    const onAbort = () => {
      void upload.abort();
      done(() => reject(signal!.reason));
    };
    let settled = false;
    const done = (settle: () => void) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      settle();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    upload.start();
  });
}

/**
 * Uploads `source` to `path` in the task's workspace over tus, resuming an unfinished upload of the
 * same file (same task, path, size and `fingerprint`) remembered in `urlStorage`. Answers the
 * completed transfer.
 */
export async function uploadFile(
  transport: Transport,
  api: TransferApi,
  taskId: string,
  source: UploadSource,
  options: UploadFileOptions,
): Promise<FileTransfer> {
  const size = sizeOf(source, options.size);
  const storage = options.urlStorage ?? sharedMemory;
  const key = ['paddock', transport.baseUrl, taskId, options.path, size, options.fingerprint ?? ''].join('|');
  let found = await previousTransfer(api, storage, key, taskId, options);
  if (!found) {
    const transfer = await api.create(taskId, { path: options.path, size_bytes: size }, options);
    const storageKey = await storage.addUpload(key, {
      size,
      metadata: { transfer_id: transfer.id, task_id: taskId, path: options.path },
      creationTime: new Date().toISOString(),
      uploadUrl: transfer.upload?.endpoint ?? null,
      parallelUploadUrls: null,
      urlStorageKey: '',
    });
    found = { transfer, storageKey };
  }
  let { transfer } = found;
  if (transfer.status !== 'completed') {
    if (!transfer.upload) throw new TypeError(`upload ${transfer.id} has no tus endpoint`);
    await sendBytes(await tusInput(source), transfer.upload.endpoint, size, options);
    transfer = await api.get(taskId, transfer.id, options);
  }
  await storage.removeUpload(found.storageKey);
  return transfer;
}
