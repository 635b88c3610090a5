/**
 * `@paddock/sdk/node`: what only Node can do. A file-backed `urlStorage`, so an upload resumes even
 * after the process was killed, and uploads of local files read from disk as they are sent.
 */
import { createReadStream } from 'node:fs';
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import type { FileTransfer } from '@paddock/protocol';
import type { PaddockClient } from './client.ts';
import type { CallOptions } from './http.ts';
import type { PreviousUpload, TusInput, UploadFileOptions, UrlStorage } from './uploads.ts';

export * from './index.ts';

/**
 * Where a program keeps unfinished uploads by default: `uploads.json` in its configuration folder
 * (`configHome`: the caller's `$XDG_CONFIG_HOME`, read by the program, not by the library), else in
 * `~/.config/paddock`.
 */
export function defaultUploadStoragePath(configHome?: string): string {
  return join(configHome || join(homedir(), '.config'), 'paddock', 'uploads.json');
}

type Entries = Record<string, PreviousUpload>;

/**
 * A `urlStorage` kept in one JSON file (written whole, through a temporary file and a rename, so a
 * kill mid-write leaves the previous version). Calls of one storage are serialized; separate
 * processes sharing the file may lose each other's entries (the upload then starts over).
 */
export function fileUrlStorage(filePath: string = defaultUploadStoragePath()): UrlStorage {
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => {});
    return next;
  };
  const load = async (): Promise<Entries> => {
    try {
      return JSON.parse(await readFile(filePath, 'utf8')) as Entries;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' || error instanceof SyntaxError) return {};
      throw error;
    }
  };
  const save = async (entries: Entries) => {
    await mkdir(dirname(filePath), { recursive: true, mode: 0o700 });
    const temporary = `${filePath}.${process.pid}.tmp`;
    await writeFile(temporary, JSON.stringify(entries, null, 2), { mode: 0o600 });
    await rename(temporary, filePath);
  };
  const matching = (entries: Entries, prefix: string) =>
    Object.entries(entries)
      .filter(([key]) => key.startsWith(prefix))
      .map(([key, upload]) => ({ ...upload, urlStorageKey: key }));
  return {
    findAllUploads: () => serial(async () => matching(await load(), 'tus::')),
    findUploadsByFingerprint: (fingerprint) =>
      serial(async () => matching(await load(), `tus::${fingerprint}::`)),
    removeUpload: (key) =>
      serial(async () => {
        const entries = await load();
        if (!(key in entries)) return;
        delete entries[key];
        await save(entries);
      }),
    addUpload: (fingerprint, upload) =>
      serial(async () => {
        const entries = await load();
        const key = `tus::${fingerprint}::${Date.now()}-${Math.random().toString(36).slice(2, 10)}`;
        entries[key] = { ...upload, urlStorageKey: key };
        await save(entries);
        return key;
      }),
  };
}

export interface UploadLocalFileOptions extends Omit<UploadFileOptions, 'path' | 'size' | 'fingerprint'> {
  /** Where it lands in the workspace (default: the local file's name). */
  path?: string;
}

/**
 * Uploads a local file, read from disk as it goes, resuming an unfinished upload of the same file
 * (same path, size and modification time) even from an earlier process: unfinished uploads are kept
 * in `urlStorage`, by default `fileUrlStorage()`.
 */
export async function uploadLocalFile(
  client: PaddockClient,
  taskId: string,
  localPath: string,
  options: UploadLocalFileOptions & CallOptions = {},
): Promise<FileTransfer> {
  const absolute = resolve(localPath);
  const info = await stat(absolute);
  if (!info.isFile()) throw new TypeError(`${localPath} is not a file`);
  // tus reads the file by its path, a range at a time; this stream only names it.
  const file = createReadStream(absolute);
  try {
    return await client.uploads.upload(taskId, file as unknown as TusInput, {
      ...options,
      path: options.path ?? basename(absolute),
      size: info.size,
      fingerprint: `${absolute}|${info.mtimeMs}`,
      urlStorage: options.urlStorage ?? fileUrlStorage(),
    });
  } finally {
    file.destroy();
  }
}
