import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ownCgroupConfig } from '@paddock/sandbox';
import { testDatabases } from '@paddock/testing';
import { type Deployment, startDeployment } from '@paddock/testing/deployment';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { agentSpec, allEvents, eventSeen, json, settled } from './helpers.ts';

/** The mount points under `dir` in the host's mount table, one entry per mount (stacked ones repeat). */
function mountsUnder(dir: string): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4] ?? '')
    .filter((point) => point.startsWith(`${dir}/`));
}

/** The sandbox groups under a cgroup parent, per controller, with the processes in each. */
function groupsUnder(parent: string): Map<string, number[]> {
  const groups = new Map<string, number[]>();
  const { mount } = ownCgroupConfig('/');
  for (const controller of ['memory', 'cpu', 'pids', 'freezer']) {
    const dir = join(mount, controller, parent);
    let names: string[] = [];
    try {
      names = readdirSync(dir, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name);
    } catch {}
    for (const name of names) {
      const procs = readFileSync(join(dir, name, 'cgroup.procs'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map(Number);
      groups.set(`${controller}/${name}`, procs);
    }
  }
  return groups;
}

/** A process that still runs: not gone, and not a zombie its new parent has yet to reap. */
const alive = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return false;
  }
};

// Root-side state of the host (mounts, cgroups): one database is enough, PostgreSQL when there is one.
describe.each(testDatabases().slice(-1))(
  'a node killed mid-turn cleans up when it comes back, on $name',
  (database) => {
    let deployment: Deployment;
    beforeAll(async () => {
      deployment = await startDeployment(database, {
        PADDOCK_RUNNER: 'embedded',
        PADDOCK_STANDBY_SANDBOXES: '1',
      });
      await deployment.startServer();
    });
    afterAll(() => deployment?.close());

    it('removes the mounts and cgroups the dead process left, and ends its sandboxes’ processes', {
      timeout: 120_000,
    }, async () => {
      const created = await json<{ thread_id: string }>(
        await deployment.request('POST', '/v2/threads', {
          body: { agent: agentSpec(), input: '::sh sleep 300' },
        }),
        201,
      );
      await eventSeen(deployment, created.thread_id, 'tool_call.start');
      // The standby's takeover releases its shared folder's staging point after the turn began, and
      // the standby that replaces it has its volume mounted (a mount under way when the process is
      // killed still completes, in the host commands' process).
      await vi.waitFor(
        () => {
          const mounts = mountsUnder(deployment.dataDir);
          expect(mounts.filter((p) => p.endsWith('.staging'))).toEqual([]);
          expect(mounts.some((p) => p.includes('/sandboxes/standby/'))).toBe(true);
        },
        {
          timeout: 10_000,
          interval: 50,
        },
      );
      const parent = ownCgroupConfig(join(deployment.dataDir, 'sandboxes')).parent;
      const mountsBefore = mountsUnder(deployment.dataDir);
      const groupsBefore = groupsUnder(parent);
      // What a crash leaves behind is there to be left: mounts (views, shared mount points, the
      // workspace) and the groups of the running sandbox and the standby.
      expect(mountsBefore.length).toBeGreaterThan(0);
      expect(groupsBefore.size).toBeGreaterThan(0);
      const sandboxProcesses = [...groupsBefore.values()].flat();
      expect(sandboxProcesses.length).toBeGreaterThan(0);

      await deployment.killServer('SIGKILL');
      // Still in the mount table and the cgroup tree after the process is gone.
      expect(mountsUnder(deployment.dataDir)).toEqual(mountsBefore);
      expect([...groupsUnder(parent).keys()].filter((g) => groupsBefore.has(g)).length).toBeGreaterThan(0);

      await deployment.startServer();
      // Cleared as it starts (the standby pool clears its directory as it first fills, just after).
      await vi.waitFor(
        () => {
          // The new process mounts its read-only views at the same fixed paths (views/v0, …); every
          // other mount point has a name of its own (a standby's, a sandbox's, a thread's workspace).
          // So: no point mounted twice (a view on its predecessor's), none of the other old names left.
          const after = mountsUnder(deployment.dataDir);
          expect(after.length, 'mounts stacked on the dead process’s').toBe(new Set(after).size);
          const left = after.filter((point) => mountsBefore.includes(point) && !/\/views\/v\d+$/.test(point));
          expect(left, 'mounts of the dead process').toEqual([]);
          const groupsLeft = [...groupsUnder(parent).keys()].filter((g) => groupsBefore.has(g));
          expect(groupsLeft, 'cgroups of the dead process').toEqual([]);
        },
        { timeout: 15_000, interval: 100 },
      );
      expect(sandboxProcesses.filter(alive), 'its sandboxes’ processes').toEqual([]);
      // The turn it was running is settled as soon as the node is back, not when its lease (30 s) runs out.
      const thread = await settled(deployment, created.thread_id, 15_000);
      expect(thread.status).toBe('fail');
      const events = await allEvents(deployment, created.thread_id);
      expect(events.find((e) => e.type === 'error')?.data).toMatchObject({
        code: 'lease_expired',
        message: expect.stringContaining('came back'),
      });
    });
  },
);
