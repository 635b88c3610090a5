import { existsSync, readFileSync } from 'node:fs';
import { stat, statfs } from 'node:fs/promises';
import { join } from 'node:path';
import { testDatabases } from '@paddock/testing';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIdleThread, json, sandboxToken } from './helpers.ts';

interface CodeRun {
  exit_code: number;
  stdout: string;
  stderr: string;
}

const MiB = 1024 ** 2;
const quota = 64 * MiB;
// Quotas need root (a volume per workspace), and the sandboxes to write with need bubblewrap.
const canRun =
  process.getuid?.() === 0 && existsSync('/usr/bin/bwrap') && process.env.PADDOCK_TEST_SANDBOX !== 'process';

describe.skipIf(!canRun).each(testDatabases())('workspace disk quota on $name', (database) => {
  let server: TestServer;
  let threadId: string;
  let token: string;

  beforeAll(async () => {
    server = await startTestServer(database, { PADDOCK_WORKSPACE_QUOTA_S: '64M' });
    threadId = await createIdleThread(server);
    token = await sandboxToken(server, threadId);
  });
  afterAll(async () => {
    const dataDir = server?.dataDir;
    await server?.close();
    // Closing the server unmounted the volume: nothing of the data dir is mounted any more.
    if (dataDir) expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(dataDir);
  });

  const sh = async (code: string) =>
    json<CodeRun>(
      await server.request('POST', `/v2/tasks/${threadId}/code/run/sync`, {
        body: { language: 'bash', code, timeout_ms: 60_000 },
        token,
      }),
      200,
    );

  it('fails a write past the S quota with ENOSPC inside the sandbox, and the host disk barely moves', async () => {
    const workspace = join(server.dataDir, 'workspaces', threadId);
    const freeBefore = await freeBytes(server.dataDir);
    // Four times the quota, in one go, as fast as the disk takes it.
    const filled = await sh('dd if=/dev/zero of=big bs=1M count=256 2>&1; echo "exit=$?"; sync');
    expect(filled.stdout).toContain('No space left on device');
    expect(filled.stdout).toMatch(/exit=[1-9]/);
    const written = (await stat(join(workspace, 'big'))).size;
    expect(written).toBeLessThanOrEqual(quota);
    // The host spent about the quota, not what was asked for (other tests may write meanwhile: a wide margin).
    expect(freeBefore - (await freeBytes(server.dataDir))).toBeLessThan(quota + 48 * MiB);

    // The workspace is its own filesystem, mounted without set-uid programs or devices.
    const mounts = await sh("grep ' /workspace ' /proc/self/mountinfo");
    expect(mounts.stdout).toMatch(/\snosuid\b|,nosuid/);
    expect(mounts.stdout).toMatch(/nodev/);

    // Capabilities say what bounds a workspace.
    const { providers } = await json<{ providers: { machine_kind: string; isolation?: string }[] }>(
      await server.request('GET', '/v2/machines/capabilities'),
      200,
    );
    const sandboxA = providers.find((provider) => provider.machine_kind === 'sandbox_a');
    expect(sandboxA?.isolation).toContain('workspace disk quota S 64 MiB, M 10 GiB, L 20 GiB');

    // Freed, the workspace works again.
    const after = await sh(
      'rm big && dd if=/dev/zero of=again bs=1M count=8 2>/dev/null && echo ok > note && cat note',
    );
    expect(after).toMatchObject({ exit_code: 0, stdout: 'ok\n' });
  });
});

async function freeBytes(path: string): Promise<number> {
  const fs = await statfs(path);
  return fs.bavail * fs.bsize;
}
