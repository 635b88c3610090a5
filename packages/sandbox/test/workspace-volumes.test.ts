import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chown, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BwrapProvider, createBwrapProvider } from '../src/bwrap/bwrap-provider.ts';
import { Runner } from '../src/runner.ts';
import type { SandboxStatus } from '../src/thread-sandbox.ts';
import { defaultUidRange } from '../src/workspaces/uid-claims.ts';
import { Workspaces } from '../src/workspaces/workspaces.ts';
import { makeTempRoot, removeCgroupParent, testCgroupParent } from './temp-root.ts';
import { startTestServer, type TestServer } from './test-server.ts';

const cgroupMount = '/sys/fs/cgroup';
const cgroupParent = testCgroupParent('volumes');
const MiB = 1024 ** 2;
const quotas = { S: 64 * MiB, M: 96 * MiB };

const mountedUnder = (path: string) =>
  readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter((line) => line.split(' ')[4]?.startsWith(path)).length;

/** Workspace volumes: a standby's handed over with its quota, kept across restarts, never left mounted. */
describe.skipIf(!existsSync('/usr/bin/bwrap') || process.getuid?.() !== 0)('workspace volumes', () => {
  let root: Awaited<ReturnType<typeof makeTempRoot>>;
  let server: TestServer;
  let provider: BwrapProvider;
  const stateDir = () => join(root.path, 'workspace-state');
  const workspaceOf = (threadId: string) => join(root.path, 'workspaces', threadId);
  const open = () => new Workspaces({ stateDir: stateDir(), uids: defaultUidRange, quotas });

  beforeAll(async () => {
    root = await makeTempRoot('volumes');
    server = await startTestServer();
    provider = await createBwrapProvider({
      stateDir: await root.dir('provider'),
      cgroups: { mount: cgroupMount, parent: cgroupParent },
    });
  });

  afterAll(async () => {
    await provider?.close();
    await server?.close();
    if (root) expect(mountedUnder(root.path)).toBe(0);
    await root?.remove();
    await removeCgroupParent(cgroupMount, cgroupParent);
  });

  it("hands a standby's volume to a new thread: its uid, its quota, its files; nothing mounted after shutdown", async () => {
    const workspaces = open();
    const runner = new Runner({
      provider: { ...provider, close: async () => {} },
      stateDir: join(root.path, 'runner'),
      apiTarget: { host: '127.0.0.1', port: server.port },
      standby: { size: 'S', count: 1 },
      workspaces,
    });
    await runner.standbysWarm();
    const threadId = `thr-${randomBytes(4).toString('hex')}`;
    const statuses: SandboxStatus[] = [];
    await runner.ensure(threadId, {
      workspaceDir: workspaceOf(threadId),
      env: { PADDOCK_API_URL: `http://127.0.0.1:${server.port}`, PADDOCK_TOKEN: 'pdk_thr_test' },
      size: 'S',
      onStatus: (status) => statuses.push(status),
    });
    expect(statuses.at(-1)?.detail).toBe('took over a standby sandbox');
    const run = await runner.exec(threadId, {
      op: 'run',
      language: 'bash',
      code: 'id -u; df -B1 --output=size /workspace | tail -1; echo mine > mine.txt; dd if=/dev/zero of=big bs=1M count=100 2>&1',
      timeout_ms: 30_000,
      output_limit_bytes: 65_536,
    });
    const [uid, size] = run.stdout.split('\n');
    expect(Number(uid)).toBe((await stat(workspaceOf(threadId))).uid);
    expect(Number(size)).toBeLessThanOrEqual(quotas.S);
    expect(Number(size)).toBeGreaterThan(quotas.S * 0.8);
    expect(run.stdout).toContain('No space left on device');
    expect(await readFile(join(workspaceOf(threadId), 'mine.txt'), 'utf8')).toBe('mine\n');
    // The standby's image is the thread's now; the pool's next standby has one of its own.
    expect(await readdir(join(stateDir(), 'volumes'))).toContain(`${threadId}.img`);

    await runner.shutdown();
    await workspaces.close();
    const volumesLeft = () => mountedUnder(workspaceOf('')) + mountedUnder(join(root.path, 'runner'));
    expect(volumesLeft()).toBe(0);

    // Made again by a new process, the workspace is the same volume, uid and files.
    const again = open();
    const reopened = await again.ensure(workspaceOf(threadId), 'S');
    expect(reopened.uid).toBe(Number(uid));
    expect(await readFile(join(workspaceOf(threadId), 'mine.txt'), 'utf8')).toBe('mine\n');
    await again.close();
    expect(volumesLeft()).toBe(0);
  });

  it('keeps a workspace from before volumes as it is, without a quota', async () => {
    const workspaces = open();
    const legacy = workspaceOf(`thr-old-${randomBytes(4).toString('hex')}`);
    await mkdir(legacy, { recursive: true });
    await writeFile(join(legacy, 'old.txt'), 'old\n');
    await chown(legacy, 65534, 65534);
    const workspace = await workspaces.ensure(legacy, 'S');
    expect(workspace.uid).toBe(65534);
    expect(mountedUnder(legacy)).toBe(0);
    expect(await readFile(join(legacy, 'old.txt'), 'utf8')).toBe('old\n');
    await workspaces.close();
  });

  it('removes the standby volumes a killed runner left mounted', async () => {
    const standbyDir = join(root.path, 'killed-runner', 'standby');
    const killed = open();
    await killed.ensure(join(standbyDir, 'standby-left1'), 'S');
    expect(mountedUnder(standbyDir)).toBe(1);
    // The killed runner never closes; the next one clears its standby folder.
    await open().removeAllUnder(standbyDir);
    expect(mountedUnder(standbyDir)).toBe(0);
    expect(existsSync(standbyDir)).toBe(false);
    expect(existsSync(join(stateDir(), 'volumes', 'standby-left1.img'))).toBe(false);
  });
});
