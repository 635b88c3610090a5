import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, parseConfig } from '@paddock/server/config';
import { afterAll, describe, expect, it } from 'vitest';
import { createUploadBackend } from '../src/uploads/upload-store.ts';

// A real S3 cannot be reached from here (no network): these only show the selection and its wiring.
describe('upload store selection', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'paddock-upload-store-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('keeps uploads under the data dir by default, in bucket "local"', () => {
    const backend = createUploadBackend(parseConfig({ PADDOCK_DATA_DIR: dataDir }));
    expect(backend.store.bucket).toBe('local');
    expect(existsSync(join(dataDir, 'uploads'))).toBe(true);
  });

  it('stops start-up on PADDOCK_UPLOAD_STORE=s3 without a bucket, naming the variable', () => {
    expect(() => parseConfig({ PADDOCK_DATA_DIR: dataDir, PADDOCK_UPLOAD_STORE: 's3' })).toThrow(
      new ConfigError('invalid PADDOCK_UPLOAD_S3_BUCKET: required when PADDOCK_UPLOAD_STORE=s3'),
    );
  });

  it('sends uploads to the configured S3 endpoint and bucket', async () => {
    const s3Dir = join(dataDir, 's3');
    const backend = createUploadBackend(
      parseConfig({
        PADDOCK_DATA_DIR: s3Dir,
        PADDOCK_UPLOAD_STORE: 's3',
        PADDOCK_UPLOAD_S3_BUCKET: 'paddock-uploads',
        // Nothing listens on the discard port: the store's first request fails to connect.
        PADDOCK_UPLOAD_S3_ENDPOINT: 'http://127.0.0.1:9',
        PADDOCK_UPLOAD_S3_FORCE_PATH_STYLE: 'true',
        PADDOCK_UPLOAD_S3_ACCESS_KEY_ID: 'test',
        PADDOCK_UPLOAD_S3_SECRET_ACCESS_KEY: 'test',
      }),
    );
    expect(backend.store.bucket).toBe('paddock-uploads');
    await expect(backend.store.create('k', 10)).rejects.toThrow(/ECONNREFUSED|connect/);
    expect(existsSync(join(s3Dir, 'uploads'))).toBe(false);
  });
});
