import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { createServer, connect as netConnect, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testDatabases } from '@paddock/testing';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { adminTokenWith, agentSpec, createIdleThread, json, settled } from './helpers.ts';
import {
  createTransfer,
  readTransfer,
  transferWhen,
  tusHead,
  tusPatch,
  tusUpload,
} from './upload-helpers.ts';

const MiB = 1024 * 1024;
const asRoot = process.getuid?.() === 0;

/**
 * A TCP relay to `target` that passes the first `cutAfter` bytes a client sends and then drops the
 * connection, as a network failing mid-upload would.
 */
async function cuttingRelay(
  target: URL,
  cutAfter: number,
): Promise<{ url(path: string): string; close(): void }> {
  const relay: Server = createServer((client) => {
    const upstream = netConnect(Number(target.port), target.hostname);
    let passed = 0;
    client.on('data', (chunk: Buffer) => {
      const room = cutAfter - passed;
      if (room <= 0) return;
      upstream.write(chunk.subarray(0, room));
      passed += Math.min(room, chunk.length);
      if (passed >= cutAfter) {
        upstream.end();
        client.destroy();
      }
    });
    upstream.pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const { port } = relay.address() as { port: number };
  return {
    url(endpoint) {
      const url = new URL(endpoint);
      url.port = String(port);
      return url.toString();
    },
    close: () => relay.close(),
  };
}

describe.each(testDatabases())('resumable uploads on $name', (database) => {
  let server: TestServer;
  let readToken: string;

  beforeAll(async () => {
    server = await startTestServer(database, { PADDOCK_UPLOAD_MAX_BYTES: String(64 * MiB) });
    readToken = await adminTokenWith(server, ['read']);
  });
  afterAll(() => server.close());

  const workspace = (taskId: string) => join(server.dataDir, 'workspaces', taskId);
  const storedBytes = (key: string) => join(server.dataDir, 'uploads', key);

  it('takes a file of a few MB from the tus client and puts it whole at its path in the workspace', async () => {
    const taskId = await createIdleThread(server);
    const data = randomBytes(3 * MiB + 123);
    const created = await createTransfer(server, taskId, 'data/in/blob.bin', data.length);
    expect(created).toMatchObject({
      task_id: taskId,
      direction: 'upload',
      path: 'data/in/blob.bin',
      size_bytes: data.length,
      status: 'pending_upload',
      bytes_transferred: 0,
      stored: true,
      error_code: null,
      error: null,
      entry: null,
      download_url: null,
      upload: { bucket: 'local', object_key: created.id },
    });
    const upload = created.upload!;
    expect(upload.endpoint.startsWith(`${server.url}/v2/uploads/tus/${created.id}?`)).toBe(true);
    expect(new URL(upload.endpoint).searchParams.get('signature')).toBe(upload.signature);
    expect(upload.expires_at > created.created_at).toBe(true);
    // The partial bytes wait outside the workspace.
    expect(existsSync(storedBytes(created.id))).toBe(true);
    expect(existsSync(join(workspace(taskId), 'data'))).toBe(false);

    const requests = await tusUpload(upload.endpoint, data);
    expect(requests).toEqual(['HEAD', 'PATCH 0']);

    const done = await readTransfer(server, taskId, created.id);
    expect(done).toMatchObject({
      status: 'completed',
      bytes_transferred: data.length,
      stored: false,
      upload: null,
      entry: {
        name: 'blob.bin',
        path: 'data/in/blob.bin',
        is_dir: false,
        size: data.length,
        mode: '-rw-r--r--',
        permissions: '0644',
      },
    });
    const landed = join(workspace(taskId), 'data/in/blob.bin');
    expect((await readFile(landed)).equals(data)).toBe(true);
    // Nothing but the file: no temporary file left beside it, and the store's copy is dropped.
    expect(await readdir(join(workspace(taskId), 'data/in'))).toEqual(['blob.bin']);
    expect(existsSync(storedBytes(created.id))).toBe(false);
    if (asRoot) {
      // The thread's sandbox uid, which owns its workspace (a uid of its own, no host user's).
      const uid = (await stat(workspace(taskId))).uid;
      expect(uid).toBeGreaterThanOrEqual(200_000);
      for (const path of ['data', 'data/in', 'data/in/blob.bin']) {
        expect((await stat(join(workspace(taskId), path))).uid, path).toBe(uid);
      }
      expect(done.entry).toMatchObject({ owner: String(uid), group: String(uid) });
    }
    // Once completed, the URL tells a client resuming after a lost response that all is in.
    const head = await tusHead(upload.endpoint);
    expect(head.status).toBe(200);
    expect(head.headers.get('upload-offset')).toBe(String(data.length));
    expect((await tusPatch(upload.endpoint, data.length, Buffer.from('x'))).status).toBe(410);
  });

  it('lands a file the agent can change, beside the running sandbox, in directories it can write', async () => {
    const { thread_id: taskId } = await json<{ thread_id: string }>(
      await server.request('POST', '/v2/threads', { body: { agent: agentSpec(), input: '::sh true' } }),
      201,
    );
    await settled(server, taskId);
    const created = await createTransfer(server, taskId, 'notes/deep/readme.txt', 6);
    await tusUpload(created.upload!.endpoint, Buffer.from('hello\n'));
    await server.request('POST', `/v2/threads/${taskId}/messages`, {
      body: {
        messages: [{ content: '::sh echo more >> notes/deep/readme.txt && touch notes/deep/new.txt' }],
        run: true,
      },
    });
    await settled(server, taskId);
    expect(await readFile(join(workspace(taskId), 'notes/deep/readme.txt'), 'utf8')).toBe('hello\nmore\n');
    expect(existsSync(join(workspace(taskId), 'notes/deep/new.txt'))).toBe(true);
  });

  it('resumes from the offset the server holds after the connection is cut mid-upload', async () => {
    const taskId = await createIdleThread(server);
    const data = randomBytes(4 * MiB);
    const created = await createTransfer(server, taskId, 'resumed.bin', data.length);
    const endpoint = created.upload!.endpoint;

    const relay = await cuttingRelay(new URL(server.url), MiB + 4321);
    try {
      await expect(tusUpload(relay.url(endpoint), data)).rejects.toThrow();
    } finally {
      relay.close();
    }
    // The server stores what the cut request brought a moment after the connection dies (the
    // client may see the cut first): until then a HEAD answers the offset before it.
    const offset = await vi.waitFor(async () => {
      const head = await tusHead(endpoint);
      expect(head.status).toBe(200);
      const held = Number(head.headers.get('upload-offset'));
      expect(held).toBeGreaterThan(0);
      return held;
    });
    expect(offset).toBeLessThan(data.length);
    const partial = await transferWhen(server, taskId, created.id, (t) => t.bytes_transferred === offset);
    expect(partial).toMatchObject({ status: 'uploading', stored: true, entry: null });
    expect(existsSync(join(workspace(taskId), 'resumed.bin'))).toBe(false);

    // A fresh client on the same URL asks for the offset and sends only the rest.
    const requests = await tusUpload(endpoint, data);
    expect(requests).toEqual(['HEAD', `PATCH ${offset}`]);
    expect((await readFile(join(workspace(taskId), 'resumed.bin'))).equals(data)).toBe(true);
    expect(await readTransfer(server, taskId, created.id)).toMatchObject({
      status: 'completed',
      bytes_transferred: data.length,
    });
  });

  it('refuses more bytes than size_bytes, and lands nothing short of it', async () => {
    const taskId = await createIdleThread(server);
    const bigger = await createTransfer(server, taskId, 'bigger.bin', 1000);
    const error = await tusUpload(bigger.upload!.endpoint, randomBytes(1001)).catch((e: unknown) => e);
    expect(String(error)).toMatch(/response code: 413/);
    expect(await readTransfer(server, taskId, bigger.id)).toMatchObject({ status: 'pending_upload' });

    // A client with a smaller file sends all it has; the upload waits for the rest.
    const smaller = await createTransfer(server, taskId, 'smaller.bin', 1000);
    await tusUpload(smaller.upload!.endpoint, randomBytes(999));
    await transferWhen(
      server,
      taskId,
      smaller.id,
      (t) => t.status === 'uploading' && t.bytes_transferred === 999,
    );
    expect(existsSync(join(workspace(taskId), 'bigger.bin'))).toBe(false);
    expect(existsSync(join(workspace(taskId), 'smaller.bin'))).toBe(false);

    const tooLarge = await json<{ detail: { code: string } }>(
      await server.request('POST', `/v2/tasks/${taskId}/files/uploads`, {
        body: { path: 'huge.bin', size_bytes: 64 * MiB + 1 },
      }),
      413,
    );
    expect(tooLarge.detail.code).toBe('upload_too_large');
    const empty = await json<{ detail: { loc: unknown[] }[] }>(
      await server.request('POST', `/v2/tasks/${taskId}/files/uploads`, {
        body: { path: 'e', size_bytes: 0 },
      }),
      422,
    );
    expect(empty.detail[0]?.loc).toEqual(['body', 'size_bytes']);
  });

  it('refuses a path outside the workspace, or a directory, with 400 invalid_path', async () => {
    const taskId = await createIdleThread(server);
    // The server makes the workspace (its sandbox's, as the workspace helper requires), the test what is in it.
    await createTransfer(server, taskId, 'first.bin', 1);
    await mkdir(join(workspace(taskId), 'sub'));
    await symlink('/tmp', join(workspace(taskId), 'out'));
    const held = await readdir(join(server.dataDir, 'uploads'));
    for (const path of [
      '../escape.txt',
      'sub/../../escape.txt',
      '/etc/paddock.txt',
      'out/x.txt',
      'sub',
      '.',
    ]) {
      const refused = await json<{ detail: { code: string; message: string } }>(
        await server.request('POST', `/v2/tasks/${taskId}/files/uploads`, { body: { path, size_bytes: 10 } }),
        400,
      );
      expect(refused.detail.code, path).toBe('invalid_path');
    }
    // Refused before anything was made for it.
    expect(await readdir(join(server.dataDir, 'uploads'))).toEqual(held);
  });

  it('fails an upload whose path was turned into a way out after it was created, and writes nothing there', async () => {
    const taskId = await createIdleThread(server);
    const created = await createTransfer(server, taskId, 'planted/x.txt', 5);
    const outside = await mkdtemp(join(tmpdir(), 'paddock-outside-'));
    try {
      await symlink(outside, join(workspace(taskId), 'planted'));
      await expect(tusUpload(created.upload!.endpoint, Buffer.from('12345'))).rejects.toThrow(
        /response code: 400/,
      );
      expect(await readdir(outside)).toEqual([]);
      expect(await readTransfer(server, taskId, created.id)).toMatchObject({
        status: 'failed',
        error_code: 'invalid_path',
        error: expect.stringMatching(/outside the workspace/),
        entry: null,
      });
      expect((await tusHead(created.upload!.endpoint)).status).toBe(410);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it('fails with 400 invalid_path, not 500, an upload whose parent became a file, and leaves nothing half-written', async () => {
    const taskId = await createIdleThread(server);
    const created = await createTransfer(server, taskId, 'notes/today.txt', 5);
    // The agent puts a file where the upload needs a directory.
    await writeFile(join(workspace(taskId), 'notes'), 'a file\n');
    const landing = await tusPatch(created.upload!.endpoint, 0, Buffer.from('12345'));
    expect(await json(landing, 400)).toEqual({
      detail: { code: 'invalid_path', message: expect.any(String) },
    });
    expect(await readTransfer(server, taskId, created.id)).toMatchObject({
      status: 'failed',
      error_code: 'invalid_path',
      entry: null,
    });
    expect(await readFile(join(workspace(taskId), 'notes'), 'utf8')).toBe('a file\n');
    expect((await readdir(workspace(taskId))).sort()).toEqual(['notes']);
    // Once the file is there, the same path is refused before any byte.
    const refused = await server.request('POST', `/v2/tasks/${taskId}/files/uploads`, {
      body: { path: 'notes/today.txt', size_bytes: 5 },
    });
    expect((await json<{ detail: { code: string } }>(refused, 400)).detail.code).toBe('invalid_path');
  });

  it('refuses unsigned, wrongly signed and borrowed upload URLs before taking a byte', async () => {
    const taskId = await createIdleThread(server);
    const one = await createTransfer(server, taskId, 'one.bin', 100);
    const other = await createTransfer(server, taskId, 'other.bin', 100);
    const endpoint = new URL(one.upload!.endpoint);

    const unsigned = new URL(endpoint);
    unsigned.search = '';
    const missing = await tusPatch(unsigned.toString(), 0, randomBytes(100));
    expect(missing.status).toBe(401);
    expect(((await missing.json()) as { detail: { code: string } }).detail.code).toBe(
      'upload_signature_required',
    );

    const forged = new URL(endpoint);
    forged.searchParams.set('signature', 'f'.repeat(64));
    const wrong = await tusPatch(forged.toString(), 0, randomBytes(100));
    expect(wrong.status).toBe(403);
    expect(((await wrong.json()) as { detail: { code: string } }).detail.code).toBe(
      'upload_signature_invalid',
    );

    // A later expiry under the old signature does not verify either.
    const extended = new URL(endpoint);
    extended.searchParams.set('expires', String(Date.now() + 86_400_000));
    expect((await tusPatch(extended.toString(), 0, randomBytes(100))).status).toBe(403);

    // One upload's signature does not open another.
    const borrowed = new URL(other.upload!.endpoint);
    borrowed.searchParams.set('signature', one.upload!.signature);
    borrowed.searchParams.set('expires', endpoint.searchParams.get('expires')!);
    expect((await tusHead(borrowed.toString())).status).toBe(403);

    await expect(tusUpload(forged.toString(), randomBytes(100))).rejects.toThrow(/response code: 403/);
    expect(await server.paddock.services.uploads.store.offset(one.id)).toBe(0);
    expect(await server.paddock.services.uploads.store.offset(other.id)).toBe(0);
  });

  it('needs publish to create, authorize and cancel; a read token reads', async () => {
    const taskId = await createIdleThread(server);
    const created = await createTransfer(server, taskId, 'scoped.bin', 10);
    const base = `/v2/tasks/${taskId}/files/uploads`;
    const refusals = [
      await server.request('POST', base, { body: { path: 'x.bin', size_bytes: 10 }, token: readToken }),
      await server.request('POST', `${base}/${created.id}/authorize`, { token: readToken }),
      await server.request('DELETE', `${base}/${created.id}`, { token: readToken }),
    ];
    for (const refused of refusals) {
      expect(await json(refused, 403)).toEqual({ detail: 'PAT lacks required scope: publish' });
    }
    const read = await json(await server.request('GET', `${base}/${created.id}`, { token: readToken }), 200);
    // Reading never hands out a URL that writes.
    expect(read).toMatchObject({ id: created.id, status: 'pending_upload', upload: null });
    const otherTask = await createIdleThread(server);
    expect(
      await json(await server.request('GET', `/v2/tasks/${otherTask}/files/uploads/${created.id}`), 404),
    ).toEqual({ detail: 'Transfer not found' });
  });
});
