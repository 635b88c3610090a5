import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FileTransfer } from '@paddock/protocol';
import { testDatabases } from '@paddock/testing';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allEvents, createIdleThread, json, settled } from './helpers.ts';
import { createTransfer, readTransfer, tusPatch } from './upload-helpers.ts';

const asRoot = process.getuid?.() === 0;
const uploads = 200;

/**
 * Runs in the sandbox: swaps `race` (a real directory) and `race-alt` (a symlink to a host
 * directory) with renameat2(RENAME_EXCHANGE) as fast as it can, until the test drops `race-stop`,
 * then leaves the real directory at `race`.
 */
const flipper = (hostDir: string) => `import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
os.makedirs('race', exist_ok=True)
if not os.path.lexists('race-alt'):
    os.symlink(${JSON.stringify(hostDir)}, 'race-alt')
open('race-started', 'w').close()
end = time.time() + 60
flips = 0
while time.time() < end and not os.path.exists('race-stop'):
    libc.renameat2(-100, b'race', -100, b'race-alt', 2)
    flips += 1
if os.path.islink('race'):
    libc.renameat2(-100, b'race', -100, b'race-alt', 2)
print('flips', flips)`;

/** Runs `work` on each item, `width` at a time. */
async function pool<T>(items: T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

/** Every path under `dir`, relative to it (symlinks listed, not followed). */
function walk(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = `${prefix}${entry.name}`;
    return entry.isDirectory() ? [path, ...walk(join(dir, entry.name), `${path}/`)] : [path];
  });
}

describe.skipIf(!asRoot).each(testDatabases())(
  'a sandbox racing the server over its workspace on $name',
  (database) => {
    let server: TestServer;
    let hostDir: string;

    beforeAll(async () => {
      server = await startTestServer(database);
      // The host directory the sandbox's symlink points at, with a root-owned file in it.
      hostDir = await mkdtemp(join(tmpdir(), 'paddock-canary-'));
      await writeFile(join(hostDir, 'host-secret.txt'), 'HOST-SECRET\n', { mode: 0o644 });
      await writeFile(join(hostDir, 'host-only.txt'), 'HOST-ONLY\n', { mode: 0o644 });
    });
    afterAll(async () => {
      await server.close();
      await rm(hostDir, { recursive: true, force: true });
    });

    it('never lets a swapped symlink carry an upload or a read out of the workspace', {
      timeout: 120_000,
    }, async () => {
      const canary = statSync(join(hostDir, 'host-secret.txt'));
      const taskId = await createIdleThread(server);
      const workspace = join(server.paddock.services.workspacesDir, taskId);
      // Created before `race` exists, so the create-time check passes and every landing races.
      const transfers: { id: string; endpoint: string; path: string; body: Buffer }[] = [];
      await pool(
        Array.from({ length: uploads }, (_, i) => i),
        4,
        async (i) => {
          const path = i % 2 === 0 ? 'race/host-secret.txt' : `race/made-${i}/file.txt`;
          const created = await createTransfer(server, taskId, path, `upload-${i}\n`.length);
          transfers.push({
            id: created.id,
            endpoint: created.upload!.endpoint,
            path,
            body: Buffer.from(`upload-${i}\n`),
          });
        },
      );

      await json(
        await server.request('POST', `/v2/threads/${taskId}/messages`, {
          body: {
            // One command: the scripted model runs a step's tool calls side by side, so a separate
            // `::write` could land after the shell started.
            messages: [
              {
                content: `::sh echo ${Buffer.from(flipper(hostDir)).toString('base64')} | base64 -d > flip.py && python3 flip.py`,
              },
            ],
            run: true,
          },
        }),
        201,
      );
      const until = Date.now() + 60_000;
      while (!existsSync(join(workspace, 'race-started'))) {
        if (Date.now() > until)
          throw new Error(
            `the flipper did not start: ${JSON.stringify((await allEvents(server, taskId)).slice(5).map((e) => [e.type, JSON.stringify(e.data).slice(0, 300)]))}`,
          );
        await new Promise((r) => setTimeout(r, 20));
      }

      const seen: string[] = [];
      let reading = true;
      const get = (route: string, path: string) =>
        server.request('GET', `/v2/tasks/${taskId}/files${route}?${new URLSearchParams({ path })}`);
      const reads = (async () => {
        while (reading) {
          for (const [route, path] of [
            ['', 'race'],
            ['/tree', 'race'],
            ['/content', 'race/host-secret.txt'],
            ['/content', 'race/host-only.txt'],
          ] as const) {
            const response = await get(route, path);
            seen.push(`${response.status} ${await response.text()}`);
          }
        }
      })();
      await pool(transfers, 3, async (transfer) => {
        const response = await tusPatch(transfer.endpoint, 0, transfer.body);
        await response.arrayBuffer();
      });
      reading = false;
      await reads;
      writeFileSync(join(workspace, 'race-stop'), '');
      await settled(server, taskId, 30_000);

      // Nothing on the host changed: the root-owned file is the same file with the same bytes, and
      // nothing was made beside it (no directory, no temporary file).
      expect(readdirSync(hostDir).sort()).toEqual(['host-only.txt', 'host-secret.txt']);
      expect(readFileSync(join(hostDir, 'host-secret.txt'), 'utf8')).toBe('HOST-SECRET\n');
      const now = statSync(join(hostDir, 'host-secret.txt'));
      expect([now.ino, now.uid, now.mtimeMs]).toEqual([canary.ino, canary.uid, canary.mtimeMs]);

      // Each upload landed inside the workspace, or failed: as a path that leads out, or on the errno
      // the swap caused under it (`upload_failed`, named in `error`); either way nothing landed outside.
      let completed = 0;
      for (const transfer of transfers) {
        const read: FileTransfer = await readTransfer(server, taskId, transfer.id);
        if (read.status === 'completed') {
          completed++;
          if (transfer.path !== 'race/host-secret.txt') {
            expect(readFileSync(join(workspace, transfer.path))).toEqual(transfer.body);
          }
        } else {
          expect(read.status, `${transfer.path}: ${read.error}`).toBe('failed');
          expect(['invalid_path', 'upload_failed'], `${transfer.path}: ${read.error}`).toContain(
            read.error_code,
          );
        }
      }
      // Both sides of the race were met: some landings found the directory, some the link.
      expect(completed).toBeGreaterThan(0);
      expect(completed).toBeLessThan(uploads);
      expect(walk(workspace).filter((path) => path.includes('.paddock-upload-'))).toEqual([]);

      // No read ever answered what is outside. A read that loses the race answers 400 or 404; under
      // a loaded machine one in a few thousand has answered 500 instead (cause not found yet, see
      // decisions.md "Workspace helper"): a failure, never content.
      expect(seen.some((answer) => answer.startsWith('400 '))).toBe(true);
      for (const answer of seen) {
        expect(answer).toMatch(/^(200|400|404|500) /);
        if (answer.startsWith('200 ')) expect(answer).not.toMatch(/HOST-|host-only/);
      }
      expect(seen.filter((answer) => answer.startsWith('500 ')).length).toBeLessThan(seen.length / 100);
    });
  },
);
