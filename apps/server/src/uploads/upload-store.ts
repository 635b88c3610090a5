import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { UploadStore } from '@paddock/core';
import { FileStore } from '@tus/file-store';
import { S3Store } from '@tus/s3-store';
import { type DataStore, ERRORS, Upload } from '@tus/server';
import type { Config } from '../startup/config.ts';

/** A tus data store that can also stream a finished upload back (both the file and the S3 store can). */
export type ReadableDataStore = DataStore & { read(id: string): Readable | Promise<Readable> };

export interface UploadBackend {
  /** What the tus server writes into. */
  datastore: ReadableDataStore;
  /** The same bytes, as core's verbs see them. */
  store: UploadStore;
}

/**
 * The upload store the config selects: files under `<data dir>/uploads` (bucket `local`), or an S3
 * bucket (`PADDOCK_UPLOAD_STORE=s3`). Either way an upload's key is its transfer id.
 */
export function createUploadBackend(config: Config): UploadBackend {
  if (config.PADDOCK_UPLOAD_STORE === 's3') {
    const bucket = config.PADDOCK_UPLOAD_S3_BUCKET!;
    const credentials =
      config.PADDOCK_UPLOAD_S3_ACCESS_KEY_ID && config.PADDOCK_UPLOAD_S3_SECRET_ACCESS_KEY
        ? {
            accessKeyId: config.PADDOCK_UPLOAD_S3_ACCESS_KEY_ID,
            secretAccessKey: config.PADDOCK_UPLOAD_S3_SECRET_ACCESS_KEY,
          }
        : undefined; // the AWS SDK's own chain (environment, profile, instance role)
    const datastore = new DroppingS3Store({
      s3ClientConfig: {
        bucket,
        region: config.PADDOCK_UPLOAD_S3_REGION,
        endpoint: config.PADDOCK_UPLOAD_S3_ENDPOINT,
        forcePathStyle: config.PADDOCK_UPLOAD_S3_FORCE_PATH_STYLE,
        credentials,
      },
    });
    return { datastore, store: uploadStoreOver(datastore, bucket) };
  }
  const directory = join(config.dataDir, 'uploads');
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  const datastore = new FileStore({ directory });
  return { datastore, store: uploadStoreOver(datastore, 'local') };
}

/**
 * S3Store's `remove` aborts the multipart upload first, and a completed one has none left: it then
 * throws "not found" and leaves the object behind. A landed upload's object must go, so that case
 * deletes the object, its info and any incomplete part outright.
 */
class DroppingS3Store extends S3Store {
  override async remove(id: string): Promise<void> {
    try {
      await super.remove(id);
    } catch (error) {
      if (error !== ERRORS.FILE_NOT_FOUND) throw error;
      await this.client.deleteObjects({
        Bucket: this.bucket,
        Delete: { Objects: [{ Key: id }, { Key: this.infoKey(id) }, { Key: this.partKey(id, true) }] },
      });
      await this.clearCache(id);
    }
  }
}

function uploadStoreOver(datastore: ReadableDataStore, bucket: string): UploadStore {
  return {
    bucket,
    async create(key, size) {
      await datastore.create(
        new Upload({ id: key, size, offset: 0, creation_date: new Date().toISOString() }),
      );
    },
    async offset(key) {
      try {
        return (await datastore.getUpload(key)).offset;
      } catch (error) {
        if (isGone(error)) return undefined;
        throw error;
      }
    },
    async read(key) {
      return datastore.read(key);
    },
    async remove(key) {
      try {
        await datastore.remove(key);
      } catch (error) {
        if (!isGone(error)) throw error;
      }
    },
  };
}

/** The stores answer a missing upload with tus's own error objects. */
function isGone(error: unknown): boolean {
  return error === ERRORS.FILE_NOT_FOUND || error === ERRORS.FILE_NO_LONGER_EXISTS;
}
