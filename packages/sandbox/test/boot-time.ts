// Measures sandbox boot (create → ready) with bubblewrap: `node packages/sandbox/test/boot-time.ts [rounds] [quota]`.
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBwrapProvider } from '../src/bwrap/bwrap-provider.ts';
import { defaultUidRange } from '../src/workspaces/uid-claims.ts';
import { Workspaces } from '../src/workspaces/workspaces.ts';
import { removeCgroupParent, testCgroupParent } from './temp-root.ts';

const rounds = Number(process.argv[2] ?? 20);
const root = await mkdtemp(join(tmpdir(), 'paddock-boot-'));
await chmod(root, 0o700);
const workspaceDir = join(root, 'workspace');
// Made as the runner makes a thread's (its own uid); `quota` makes it a volume, as the server does.
const workspaces = new Workspaces({
  stateDir: join(root, 'workspace-state'),
  uids: process.getuid?.() === 0 ? defaultUidRange : undefined,
  quotas: process.argv.includes('quota') ? { S: 1024 ** 3 } : undefined,
});
const { uid } = await workspaces.ensure(workspaceDir, 'S');
const cgroups = { mount: '/sys/fs/cgroup', parent: testCgroupParent('boot') };
const provider = await createBwrapProvider({ stateDir: join(root, 'state'), cgroups });

const boot = async (id: string) => {
  const started = performance.now();
  const sandbox = await provider.create({ id, workspaceDir, uid, size: 'S' });
  const ms = performance.now() - started;
  await sandbox.destroy();
  return ms;
};
await boot('warm-up');
const times: number[] = [];
for (let i = 0; i < rounds; i++) times.push(await boot(`boot-${i}`));
times.sort((a, b) => a - b);
const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(1);
process.stdout.write(
  `${JSON.stringify({ rounds, cgroups: provider.cgroups, p50_ms: at(0.5), p90_ms: at(0.9), min_ms: at(0) })}\n`,
);
await provider.close();
await workspaces.close();
await rm(root, { recursive: true, force: true });
await removeCgroupParent(cgroups.mount, cgroups.parent);
