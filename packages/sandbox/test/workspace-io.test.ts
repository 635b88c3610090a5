import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { chown, mkdir, readFile, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspaceIo } from '../src/workspace-io/workspace-io.ts';
import { makeTempRoot } from './temp-root.ts';

const asRoot = process.getuid?.() === 0;
const sandboxUid = 65534;

describe('the workspace helper', () => {
  const io = createWorkspaceIo();
  let root: Awaited<ReturnType<typeof makeTempRoot>>;
  let outside: string;

  beforeAll(async () => {
    // Mode 0700, as the data dir: the helper reaches the workspace through its descriptor only.
    root = await makeTempRoot('workspace-io');
    outside = await root.dir('outside');
    await writeFile(join(outside, 'secret.txt'), 'secret\n');
  });
  afterAll(async () => {
    io.close();
    await root.remove();
  });

  /** A workspace owned by the sandbox uid (the server's own when not root), with a few links in it. */
  async function workspace(name: string): Promise<string> {
    const dir = await root.dir(name);
    await mkdir(join(dir, 'src'));
    await writeFile(join(dir, 'src', 'a.txt'), 'inside\n');
    await symlink(outside, join(dir, 'abs-link'));
    await symlink('../../outside', join(dir, 'src', 'up-link'));
    await symlink('src/a.txt', join(dir, 'inner-link'));
    await symlink('missing', join(dir, 'dangling'));
    await symlink('loop', join(dir, 'loop'));
    if (asRoot) {
      for (const path of ['', 'src', 'src/a.txt']) await chown(join(dir, path), sandboxUid, sandboxUid);
    }
    return dir;
  }
  const bytes = (text: string) => Readable.from([Buffer.from(text)]);

  it('refuses every link out (absolute, `..` above the workspace, dangling, looping); follows one inside', async () => {
    const ws = await workspace('links');
    for (const path of ['abs-link', 'abs-link/secret.txt', 'src/up-link/secret.txt', 'dangling', 'loop']) {
      expect(await io.list(ws, path), path).toMatchObject({ refused: 'invalid_path' });
      expect(await io.content(ws, path), path).toMatchObject({ refused: 'invalid_path' });
      expect(
        await io.land(ws, { path: `${path}/x.txt`, size: 1, tempTag: 't1', source: bytes('x') }),
        path,
      ).toMatchObject({ refused: 'invalid_path' });
    }
    expect(readdirSync(outside)).toEqual(['secret.txt']);
    const inner = await io.content(ws, 'inner-link');
    if ('refused' in inner) throw new Error(inner.message);
    expect(Buffer.concat(await inner.body.toArray()).toString()).toBe('inside\n');
    expect(await io.list(ws, 'src/nope')).toMatchObject({ refused: 'path_not_found' });
    expect(await io.list(ws, 'src/a.txt/below')).toMatchObject({ refused: 'path_not_found' });
  });

  it('lands a file whole as the workspace owner, replacing a link rather than writing through it; a file where a directory goes is invalid_path', async () => {
    const ws = await workspace('land');
    const landed = await io.land(ws, {
      path: 'new/deep/f.txt',
      size: 5,
      tempTag: 't2',
      source: bytes('hello'),
    });
    expect(landed).toMatchObject({ landed: { size: 5 } });
    expect(await readFile(join(ws, 'new/deep/f.txt'), 'utf8')).toBe('hello');
    const owner = asRoot ? sandboxUid : process.getuid?.();
    expect((await stat(join(ws, 'new/deep/f.txt'))).uid).toBe(owner);
    expect((await stat(join(ws, 'new'))).uid).toBe(owner);

    expect(
      await io.land(ws, { path: 'abs-link', size: 3, tempTag: 't3', source: bytes('new') }),
    ).toMatchObject({
      landed: { size: 3 },
    });
    expect(await readFile(join(ws, 'abs-link'), 'utf8')).toBe('new');
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('secret\n');

    // §8: a parent that is a file answers a refusal, not an errno; nothing half-written stays.
    for (const path of ['src/a.txt/b.txt', 'src/a.txt/c/d.txt']) {
      expect(await io.checkTarget(ws, path)).toMatchObject({ refused: 'invalid_path' });
      expect(await io.land(ws, { path, size: 1, tempTag: 't4', source: bytes('x') })).toMatchObject({
        refused: 'invalid_path',
      });
    }
    expect(await io.land(ws, { path: 'src', size: 1, tempTag: 't5', source: bytes('x') })).toMatchObject({
      refused: 'invalid_path',
    });
    // Short of its size: a failure, and no temporary file left.
    await expect(
      io.land(ws, { path: 'short.txt', size: 10, tempTag: 't6', source: bytes('abc') }),
    ).rejects.toThrow(/3 bytes, not 10/);
    expect(existsSync(join(ws, 'short.txt'))).toBe(false);
    expect(readdirSync(ws).filter((name) => name.startsWith('.paddock-upload-'))).toEqual([]);
  });

  it('does not serve a workspace through a helper that holds the directory it replaced', async () => {
    const ws = await workspace('replaced');
    expect(await io.list(ws, '.')).toMatchObject({
      entries: expect.arrayContaining([expect.objectContaining({ name: 'src' })]),
    });
    const fresh = await root.dir('fresh');
    await writeFile(join(fresh, 'only-here.txt'), 'x');
    if (asRoot) await chown(fresh, sandboxUid, sandboxUid);
    await rm(ws, { recursive: true });
    await rename(fresh, ws);
    const listed = await io.list(ws, '.');
    expect(listed).toMatchObject({ entries: [expect.objectContaining({ name: 'only-here.txt' })] });
  });

  it('streams a large file in pieces, and serves the next request after a download left half read', async () => {
    const ws = await workspace('download');
    const data = randomBytes(3 * 1024 * 1024 + 17);
    await writeFile(join(ws, 'big.bin'), data);
    const whole = await io.content(ws, 'big.bin');
    if ('refused' in whole) throw new Error(whole.message);
    expect(whole.size).toBe(data.length);
    expect(Buffer.concat(await whole.body.toArray()).equals(data)).toBe(true);

    const abandoned = await io.content(ws, 'big.bin');
    if ('refused' in abandoned) throw new Error(abandoned.message);
    for await (const _piece of abandoned.body) break;
    expect(await io.list(ws, 'src')).toMatchObject({
      entries: expect.arrayContaining([expect.objectContaining({ name: 'a.txt' })]),
    });
    expect(await io.content(ws, 'src')).toMatchObject({ refused: 'not_a_file' });
  });

  it.skipIf(!asRoot)('never runs as root: a workspace owned by root is refused', async () => {
    const ws = await root.dir('root-owned');
    await expect(io.list(ws, '.')).rejects.toThrow(/owned by root/);
    await expect(io.land(ws, { path: 'x.txt', size: 1, tempTag: 't7', source: bytes('x') })).rejects.toThrow(
      /owned by root/,
    );
    expect(readdirSync(ws)).toEqual([]);
  });
});
