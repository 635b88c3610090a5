import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectProvider } from '../src/detect-provider.ts';
import { makeTempRoot, removeCgroupParent, testCgroupParent } from './temp-root.ts';

const cgroups = { mount: '/sys/fs/cgroup', parent: testCgroupParent('detect') };

describe('detectProvider', () => {
  let root: Awaited<ReturnType<typeof makeTempRoot>>;

  beforeAll(async () => {
    root = await makeTempRoot('detect');
  });

  afterAll(async () => {
    await root?.remove();
    await removeCgroupParent(cgroups.mount, cgroups.parent);
  });

  it.skipIf(!existsSync('/usr/bin/bwrap'))('chooses bubblewrap where it works', async () => {
    const { provider, report } = await detectProvider({ stateDir: await root.dir('bwrap'), cgroups });
    expect(provider.kind).toBe('bwrap');
    if ('warmed' in provider) await provider.warmed;
    await provider.close();
    expect(report).toEqual({ kind: 'bwrap', isolation: provider.isolation, cgroups: report.cgroups });
    expect(report.isolation).toContain(report.cgroups ? 'cgroup v1' : 'no resource limits');
  });

  it('falls back to the process provider when bwrap is missing, and says why', async () => {
    const { provider, report } = await detectProvider({
      stateDir: await root.dir('missing'),
      bwrapPath: '/nonexistent/bwrap',
      cgroups,
    });
    expect(provider.kind).toBe('process');
    expect(report).toMatchObject({ kind: 'process', cgroups: false, reason: 'bwrap is not installed' });
  });
});
