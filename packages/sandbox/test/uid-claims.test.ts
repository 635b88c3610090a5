import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UidClaims } from '../src/workspaces/uid-claims.ts';
import { makeTempRoot } from './temp-root.ts';

describe('sandbox uid claims', () => {
  let root: Awaited<ReturnType<typeof makeTempRoot>>;
  beforeAll(async () => {
    root = await makeTempRoot('uid-claims');
  });
  afterAll(() => root?.remove());

  it('never hands one uid out twice, even to two processes claiming at once, and says when the range is full', async () => {
    const dir = join(root.path, 'uids');
    const range = { base: 300_000, count: 64 };
    // Two instances on one directory: the server and a detached runner on one data dir.
    const [server, runner] = [new UidClaims(dir, range), new UidClaims(dir, range)];
    const claimed = await Promise.all(
      Array.from({ length: 64 }, (_, i) => (i % 2 ? server : runner).claim(`/ws/${i}`)),
    );
    expect(new Set(claimed).size).toBe(64);
    for (const uid of claimed) expect(server.contains(uid)).toBe(true);
    await expect(server.claim('/ws/one-too-many')).rejects.toThrow(
      /every sandbox uid of 300000\.\.300063 is taken/,
    );
    // A released uid is free again.
    await runner.release(claimed[5]!);
    expect(await server.claim('/ws/again')).toBe(claimed[5]);
  });

  it('refuses a range that could hold a host user', () => {
    expect(() => new UidClaims(root.path, { base: 0, count: 10 })).toThrow(/1000 or above/);
  });
});
