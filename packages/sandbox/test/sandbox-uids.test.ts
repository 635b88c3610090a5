import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BwrapProvider, createBwrapProvider } from '../src/bwrap/bwrap-provider.ts';
import { Runner } from '../src/runner.ts';
import { defaultUidRange } from '../src/workspaces/uid-claims.ts';
import { Workspaces } from '../src/workspaces/workspaces.ts';
import { cmdlineOf, pidsWithMarker } from './host-processes.ts';
import { makeTempRoot, removeCgroupParent, testCgroupParent } from './temp-root.ts';
import { startTestServer, type TestServer } from './test-server.ts';

const cgroupMount = '/sys/fs/cgroup';
const cgroupParent = testCgroupParent('uids');
const asRoot = process.getuid?.() === 0;

/** Each thread's sandbox runs as a uid of its own, which owns its workspace and outlives its boots. */
describe.skipIf(!existsSync('/usr/bin/bwrap') || !asRoot)('sandbox uids', () => {
  let root: Awaited<ReturnType<typeof makeTempRoot>>;
  let server: TestServer;
  let provider: BwrapProvider;
  const runners: Runner[] = [];

  function startRunner(standby: number): Runner {
    const runner = new Runner({
      // One provider for the runners in turn: a runner's shutdown must not close it.
      provider: { ...provider, close: async () => {} },
      stateDir: join(root.path, 'runner'),
      apiTarget: { host: '127.0.0.1', port: server.port },
      standby: { size: 'S', count: standby },
      workspaces: new Workspaces({ stateDir: join(root.path, 'workspace-state'), uids: defaultUidRange }),
    });
    runners.push(runner);
    return runner;
  }

  const workspaceOf = (threadId: string) => join(root.path, 'workspaces', threadId);

  async function ensure(runner: Runner, threadId: string): Promise<void> {
    await runner.ensure(threadId, {
      workspaceDir: workspaceOf(threadId),
      env: { PADDOCK_API_URL: `http://127.0.0.1:${server.port}`, PADDOCK_TOKEN: 'pdk_thr_test' },
      size: 'S',
    });
  }

  async function sh(runner: Runner, threadId: string, code: string) {
    return runner.exec(threadId, {
      op: 'run',
      language: 'bash',
      code,
      timeout_ms: 10_000,
      output_limit_bytes: 65_536,
    });
  }

  beforeAll(async () => {
    root = await makeTempRoot('uids');
    server = await startTestServer();
    provider = await createBwrapProvider({
      stateDir: await root.dir('provider'),
      cgroups: { mount: cgroupMount, parent: cgroupParent },
    });
  });

  afterAll(async () => {
    for (const runner of runners) await runner.shutdown();
    await provider?.close();
    await server?.close();
    await root?.remove();
    await removeCgroupParent(cgroupMount, cgroupParent);
  });

  it('runs two threads as two uids of the range, each owning its files, neither able to signal the other', async () => {
    const runner = startRunner(1);
    await runner.standbysWarm();
    const [a, b] = [`thr-a-${randomBytes(3).toString('hex')}`, `thr-b-${randomBytes(3).toString('hex')}`];
    // The first takes over the warm standby, the second boots fresh: both ways give a uid of its own.
    await ensure(runner, a);
    await ensure(runner, b);
    const [idA, idB] = await Promise.all([sh(runner, a, 'id -u; touch made-here'), sh(runner, b, 'id -u')]);
    const uidA = Number(idA.stdout.trim());
    const uidB = Number(idB.stdout.trim());
    expect(uidA).not.toBe(uidB);
    for (const uid of [uidA, uidB]) {
      expect(uid).toBeGreaterThanOrEqual(defaultUidRange.base);
      expect(uid).toBeLessThan(defaultUidRange.base + defaultUidRange.count);
    }
    expect((await stat(workspaceOf(a))).uid).toBe(uidA);
    expect((await stat(workspaceOf(b))).uid).toBe(uidB);
    expect((await stat(join(workspaceOf(a), 'made-here'))).uid).toBe(uidA);

    // A's uid cannot signal B's process even knowing its host pid (should it ever see it).
    const marker = `9.${1000 + Math.floor(Math.random() * 8000)}`;
    const sleeping = sh(runner, b, `sleep ${marker}`).catch(() => undefined);
    let sleeper: number | undefined;
    for (let i = 0; i < 100 && sleeper === undefined; i++) {
      sleeper = pidsWithMarker(`${marker}\0`).find((pid) => cmdlineOf(pid).startsWith('sleep '));
      if (sleeper === undefined) await new Promise((r) => setTimeout(r, 20));
    }
    expect(sleeper).toBeDefined();
    const asA = (uid: number) =>
      spawnSync(
        '/usr/bin/setpriv',
        [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '/bin/sh', '-c', `kill -0 ${sleeper} 2>&1`],
        { encoding: 'utf8' },
      );
    const fromA = asA(uidA);
    expect(fromA.status).not.toBe(0);
    expect(fromA.stdout).toMatch(/not permitted/i);
    // The same probe as B's own uid succeeds: the refusal is the uid's doing.
    expect(asA(uidB).status).toBe(0);
    await runner.stop(b);
    await sleeping;

    // Destroyed and booted again, A is the same uid.
    await runner.stop(a);
    await ensure(runner, a);
    expect((await sh(runner, a, 'id -u')).stdout.trim()).toBe(String(uidA));
  });

  it('keeps each thread its uid across a restart of the runner', async () => {
    for (const runner of runners.splice(0)) await runner.shutdown();
    const thread = `thr-c-${randomBytes(3).toString('hex')}`;
    const first = startRunner(0);
    await ensure(first, thread);
    const before = (await sh(first, thread, 'id -u; echo kept > kept.txt')).stdout.trim();
    await first.shutdown();
    const second = startRunner(0);
    await ensure(second, thread);
    const after = await sh(second, thread, 'id -u; cat kept.txt; echo more >> kept.txt');
    expect(after).toMatchObject({ exit_code: 0, stdout: `${before}\nkept\n` });
  });
});
