import type { FileTransfer } from '@paddock/protocol';
import type { TestServer } from '@paddock/testing/server';
import { type HttpRequest, Upload, type UploadOptions } from 'tus-js-client';
import { vi } from 'vitest';
import { json } from './helpers.ts';

type Api = Pick<TestServer, 'request'>;

export async function createTransfer(server: Api, taskId: string, path: string, size: number) {
  return json<FileTransfer>(
    await server.request('POST', `/v2/tasks/${taskId}/files/uploads`, { body: { path, size_bytes: size } }),
    201,
  );
}

export async function readTransfer(server: Api, taskId: string, transferId: string) {
  return json<FileTransfer>(
    await server.request('GET', `/v2/tasks/${taskId}/files/uploads/${transferId}`),
    200,
  );
}

/** Waits until the transfer satisfies `done`, and answers it. */
export async function transferWhen(
  server: Api,
  taskId: string,
  transferId: string,
  done: (transfer: FileTransfer) => boolean,
  timeoutMs = 10_000,
): Promise<FileTransfer> {
  return vi.waitFor(
    async () => {
      const transfer = await readTransfer(server, taskId, transferId);
      if (!done(transfer)) throw new Error(`transfer ${transferId} still ${JSON.stringify(transfer)}`);
      return transfer;
    },
    { timeout: timeoutMs, interval: 50 },
  );
}

/**
 * Sends `data` with the real tus client to an existing upload URL (`uploadUrl`: it resumes from the
 * server's offset, never creates). Answers the requests it made, as `METHOD offset`.
 */
export function tusUpload(endpoint: string, data: Buffer, options: UploadOptions = {}): Promise<string[]> {
  const requests: string[] = [];
  return new Promise((resolve, reject) => {
    const upload = new Upload(data, {
      uploadUrl: endpoint,
      retryDelays: [],
      onBeforeRequest: (req: HttpRequest) => {
        requests.push(`${req.getMethod()} ${req.getHeader('Upload-Offset') ?? ''}`.trim());
      },
      onSuccess: () => resolve(requests),
      onError: reject,
      ...options,
    });
    upload.start();
  });
}

/** A tus HEAD on the presigned URL, without a bearer token. */
export function tusHead(endpoint: string): Promise<Response> {
  return fetch(endpoint, { method: 'HEAD', headers: { 'Tus-Resumable': '1.0.0' } });
}

/** A tus PATCH of `bytes` at `offset` on the presigned URL, without a bearer token. */
export function tusPatch(endpoint: string, offset: number, bytes: Buffer): Promise<Response> {
  return fetch(endpoint, {
    method: 'PATCH',
    headers: {
      'Tus-Resumable': '1.0.0',
      'Upload-Offset': String(offset),
      'Content-Type': 'application/offset+octet-stream',
    },
    body: new Uint8Array(bytes),
  });
}
