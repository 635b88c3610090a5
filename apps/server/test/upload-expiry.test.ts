import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { testDatabases } from '@paddock/testing';
import { startControlPlaneServer, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createIdleThread, json } from './helpers.ts';
import {
  createTransfer,
  type readTransfer,
  transferWhen,
  tusHead,
  tusPatch,
  tusUpload,
} from './upload-helpers.ts';

/** Short windows: signed URLs lapse after TTL_MS, lapsed and cancelled bytes go RETENTION_MS later. */
const TTL_MS = 1000;
const RETENTION_MS = 1500;

describe.each(testDatabases())('upload expiry, authorize, cancel and purge on $name', (database) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startControlPlaneServer(database, {
      PADDOCK_UPLOAD_URL_TTL_MS: String(TTL_MS),
      PADDOCK_UPLOAD_RETENTION_MS: String(RETENTION_MS),
    });
    // The server runs in this process and reads this clock: the windows are moved past rather than
    // waited out. Only the date is faked; it runs on in real time between the moves.
    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
  });
  afterAll(async () => {
    vi.useRealTimers();
    await server.close();
  });
  const advance = (ms: number) => vi.setSystemTime(Date.now() + ms);

  const storedBytes = (key: string) => join(server.dataDir, 'uploads', key);
  /** The purge marks the transfer unstored, then removes the bytes and the file store's record of them. */
  async function bytesDropped(key: string): Promise<void> {
    await vi.waitFor(
      () => {
        if (existsSync(storedBytes(key)) || existsSync(`${storedBytes(key)}.json`))
          throw new Error(`bytes of ${key} are still stored`);
      },
      { timeout: 5000, interval: 20 },
    );
  }
  const authorize = async (taskId: string, transferId: string) =>
    json<Awaited<ReturnType<typeof readTransfer>>>(
      await server.request('POST', `/v2/tasks/${taskId}/files/uploads/${transferId}/authorize`),
      200,
    );

  it('refuses a lapsed URL; authorize signs a fresh one and the upload carries on', async () => {
    const taskId = await createIdleThread(server);
    const data = randomBytes(2000);
    const created = await createTransfer(server, taskId, 'late.bin', data.length);
    const first = created.upload!.endpoint;
    expect((await tusPatch(first, 0, data.subarray(0, 700))).status).toBe(204);
    advance(TTL_MS + 50);

    const lapsed = await tusHead(first);
    expect(lapsed.status).toBe(403);
    const refused = await tusPatch(first, 700, data.subarray(700));
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({
      detail: { code: 'upload_signature_expired', message: expect.stringMatching(/authorize/) },
    });
    await expect(tusUpload(first, data)).rejects.toThrow(/response code: 403/);
    expect(await server.paddock.services.uploads.store.offset(created.id)).toBe(700);

    const renewed = await authorize(taskId, created.id);
    expect(renewed).toMatchObject({ status: 'uploading', bytes_transferred: 700 });
    expect(renewed.upload!.endpoint).not.toBe(first);
    expect(renewed.upload!.expires_at > created.upload!.expires_at).toBe(true);
    expect(await tusUpload(renewed.upload!.endpoint, data)).toEqual(['HEAD', 'PATCH 700']);
    const landed = join(server.dataDir, 'workspaces', taskId, 'late.bin');
    expect((await readFile(landed)).equals(data)).toBe(true);

    // A completed upload takes no fresh URL.
    const closed = await json<{ detail: { code: string } }>(
      await server.request('POST', `/v2/tasks/${taskId}/files/uploads/${created.id}/authorize`),
      409,
    );
    expect(closed.detail).toMatchObject({ code: 'upload_not_active', status: 'completed' });
  });

  it('authorize keeps an upload with nothing received pending_upload', async () => {
    const taskId = await createIdleThread(server);
    const created = await createTransfer(server, taskId, 'idle.bin', 10);
    const renewed = await authorize(taskId, created.id);
    expect(renewed).toMatchObject({ status: 'pending_upload', bytes_transferred: 0 });
    expect((await tusHead(renewed.upload!.endpoint)).headers.get('upload-offset')).toBe('0');
  });

  it('keeps a cancelled upload’s bytes for the retention, then purges them; it stays cancelled', async () => {
    const taskId = await createIdleThread(server);
    const created = await createTransfer(server, taskId, 'dropped.bin', 5000);
    const endpoint = created.upload!.endpoint;
    expect((await tusPatch(endpoint, 0, randomBytes(1200))).status).toBe(204);

    const cancelled = await json<Awaited<ReturnType<typeof readTransfer>>>(
      await server.request('DELETE', `/v2/tasks/${taskId}/files/uploads/${created.id}`),
      200,
    );
    expect(cancelled).toMatchObject({ status: 'cancelled', bytes_transferred: 1200, stored: true });
    expect(existsSync(storedBytes(created.id))).toBe(true);
    const gone = await tusHead(endpoint);
    expect(gone.status).toBe(410);
    expect((await tusPatch(endpoint, 1200, randomBytes(10))).status).toBe(410);
    // Cancelling again answers the same; authorizing does not reopen it.
    expect(
      await json(await server.request('DELETE', `/v2/tasks/${taskId}/files/uploads/${created.id}`), 200),
    ).toMatchObject({ status: 'cancelled' });
    expect(
      (await server.request('POST', `/v2/tasks/${taskId}/files/uploads/${created.id}/authorize`)).status,
    ).toBe(409);

    advance(RETENTION_MS);
    const purged = await transferWhen(server, taskId, created.id, (t) => !t.stored, RETENTION_MS * 4);
    expect(purged).toMatchObject({ status: 'cancelled', bytes_transferred: 1200 });
    await bytesDropped(created.id);
    expect(existsSync(join(server.dataDir, 'workspaces', taskId, 'dropped.bin'))).toBe(false);
  });

  it('expires an upload that never completed once its URL lapsed and the retention passed', async () => {
    const taskId = await createIdleThread(server);
    const created = await createTransfer(server, taskId, 'abandoned.bin', 5000);
    expect((await tusPatch(created.upload!.endpoint, 0, randomBytes(300))).status).toBe(204);
    advance(TTL_MS + RETENTION_MS);
    const expired = await transferWhen(
      server,
      taskId,
      created.id,
      (t) => t.status === 'expired',
      (TTL_MS + RETENTION_MS) * 3,
    );
    expect(expired).toMatchObject({ stored: false, bytes_transferred: 300, entry: null });
    await bytesDropped(created.id);
    expect(
      (await server.request('POST', `/v2/tasks/${taskId}/files/uploads/${created.id}/authorize`)).status,
    ).toBe(409);
  });
});
