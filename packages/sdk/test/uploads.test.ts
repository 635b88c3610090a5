import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, memoryUrlStorage, type PaddockClient } from '@paddock/sdk';
import { fileUrlStorage, uploadLocalFile } from '@paddock/sdk/node';
import { testDatabases } from '@paddock/testing';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { agent } from './helpers.ts';

const MiB = 1024 * 1024;

describe.each(testDatabases().slice(0, 1))('SDK uploads on $name', (database) => {
  let server: TestServer;
  let client: PaddockClient;
  let dir: string;
  beforeAll(async () => {
    server = await startTestServer(database, { PADDOCK_STANDBY_SANDBOXES: '0' });
    client = createClient({ baseUrl: server.url, token: server.token });
    dir = await mkdtemp(join(tmpdir(), 'paddock-sdk-'));
  });
  afterAll(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  const workspaceFile = (taskId: string, path: string) => join(server.dataDir, 'workspaces', taskId, path);

  it('uploads bytes over tus and answers the completed transfer', async () => {
    const { thread_id } = await client.threads.create({ agent });
    const data = randomBytes(300_000);
    const transfer = await client.uploads.upload(thread_id, new Uint8Array(data), {
      path: 'in/bytes.bin',
      urlStorage: memoryUrlStorage(),
    });
    expect(transfer).toMatchObject({ status: 'completed', path: 'in/bytes.bin', size_bytes: data.length });
    expect((await readFile(workspaceFile(thread_id, 'in/bytes.bin'))).equals(data)).toBe(true);
  });

  it('resumes an interrupted upload of a local file from a fresh client, where the server left off', async () => {
    const { thread_id } = await client.threads.create({ agent });
    const data = randomBytes(4 * MiB + 17);
    const local = join(dir, 'big.bin');
    await writeFile(local, data);
    const storagePath = join(dir, 'state', 'uploads.json');

    // The first run stops (as a killed program would) once a chunk is in.
    const stopped = new AbortController();
    await expect(
      uploadLocalFile(client, thread_id, local, {
        path: 'big.bin',
        chunkSize: MiB,
        urlStorage: fileUrlStorage(storagePath),
        signal: stopped.signal,
        onProgress: (sent) => {
          if (sent >= MiB + 1) stopped.abort(new Error('interrupted'));
        },
      }),
    ).rejects.toThrow('interrupted');
    const remembered = Object.values(JSON.parse(await readFile(storagePath, 'utf8'))) as {
      metadata: { transfer_id: string };
    }[];
    expect(remembered).toHaveLength(1);
    const transferId = remembered[0]!.metadata.transfer_id;
    const partial = await vi.waitFor(async () => {
      const transfer = await client.uploads.get(thread_id, transferId);
      expect(transfer.bytes_transferred).toBeGreaterThan(0);
      return transfer;
    });
    expect(partial.bytes_transferred).toBeLessThan(data.length);

    // Another client (another process) finds the transfer in the file and sends only the rest.
    const later = createClient({ baseUrl: server.url, token: server.token });
    const progress: number[] = [];
    const done = await uploadLocalFile(later, thread_id, local, {
      path: 'big.bin',
      urlStorage: fileUrlStorage(storagePath),
      onProgress: (sent) => progress.push(sent),
    });
    expect(done).toMatchObject({ id: transferId, status: 'completed', bytes_transferred: data.length });
    expect(Math.min(...progress)).toBeGreaterThanOrEqual(partial.bytes_transferred);
    expect((await readFile(workspaceFile(thread_id, 'big.bin'))).equals(data)).toBe(true);
    expect(JSON.parse(await readFile(storagePath, 'utf8'))).toEqual({});
  });
});
