import { mkdir, mkdtemp, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { locate, openConfined, relativeToWorkspace } from '../src/files/workspace-path.ts';

const made: string[] = [];
async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}
afterEach(async () => {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('workspace paths of the file reads', () => {
  it('takes paths relative to /workspace or absolute under it, and refuses other absolute paths', () => {
    expect(relativeToWorkspace(undefined)).toBe('.');
    expect(relativeToWorkspace('')).toBe('.');
    expect(relativeToWorkspace('src/a.txt')).toBe('src/a.txt');
    expect(relativeToWorkspace('/workspace')).toBe('.');
    expect(relativeToWorkspace('/workspace/src/../a.txt')).toBe('a.txt');
    for (const path of ['/etc/passwd', '/workspace/../etc', '/workspacex', '/']) {
      expect(() => relativeToWorkspace(path), path).toThrow(
        expect.objectContaining({ code: 'invalid_path' }),
      );
    }
  });

  it('refuses a read when a symlink out was swapped in between resolving the path and opening it', async () => {
    const workspace = await tempDir('paddock-ws-');
    const outside = await tempDir('paddock-outside-');
    await mkdir(join(workspace, 'dir'));
    await writeFile(join(workspace, 'dir', 'f.txt'), 'inside\n');
    await writeFile(join(outside, 'f.txt'), 'secret\n');
    const located = await locate(workspace, 'dir/f.txt');

    // The sandbox replaces the directory with a link out after the check, before the open.
    await rename(join(workspace, 'dir'), join(workspace, 'old'));
    await symlink(outside, join(workspace, 'dir'));
    await expect(openConfined(workspace, located)).rejects.toMatchObject({ code: 'invalid_path' });

    // Put back, the same located path opens, and reads what is inside.
    await rm(join(workspace, 'dir'));
    await rename(join(workspace, 'old'), join(workspace, 'dir'));
    const { handle } = await openConfined(workspace, located);
    try {
      expect(await readFile(handle, 'utf8')).toBe('inside\n');
    } finally {
      await handle.close();
    }
  });
});
