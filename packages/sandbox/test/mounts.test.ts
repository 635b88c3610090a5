import { symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mount, mountPoints, unmountAll } from '../src/mounts.ts';
import { makeTempRoot } from './temp-root.ts';

const stacked = async (path: string) => (await mountPoints()).includes(path);

describe.skipIf(process.getuid?.() !== 0)('unmountAll', () => {
  const roots: Awaited<ReturnType<typeof makeTempRoot>>[] = [];
  afterAll(async () => {
    for (const root of roots) await root.remove();
  });

  it('takes off every mount stacked on a path, the path given through a symlink too, and leaves the folder', async () => {
    const root = await makeTempRoot('mounts');
    roots.push(root);
    const point = await root.dir('point');
    for (const name of ['a', 'b', 'c']) {
      const source = await root.dir(name);
      await writeFile(join(source, 'marker'), name);
      await mount(['--bind', source, point]);
    }
    expect(await stacked(point)).toBe(true);
    await symlink(point, join(root.path, 'link'));

    await unmountAll(join(root.path, 'link'));

    expect(await stacked(point)).toBe(false);
    // A path with nothing mounted on it is no error.
    await unmountAll(point);
  });
});
