import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, stat, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { installKey } from '../src/acp/catalog.ts';
import { installedMarker, npmReason, ProgramCache } from '../src/acp/program-cache.ts';
import { tempDir } from './turn-helpers.ts';

// A tiny real package from the npm registry: the cache runs the real npm against it.
const tiny = { packages: { 'is-number': '7.0.0' } };
const roots: string[] = [];

async function newCache(): Promise<{ cache: ProgramCache; root: string; logged: string[] }> {
  const root = await tempDir('paddock-program-cache-');
  roots.push(root);
  const logged: string[] = [];
  return { cache: new ProgramCache(join(root, 'harnesses'), { log: (l) => logged.push(l) }), root, logged };
}

afterAll(async () => {
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

describe('ProgramCache', () => {
  it('installs a pinned package from the registry once, readable by all, and says so', async () => {
    const { cache, logged } = await newCache();
    expect(cache.isInstalled(tiny)).toBe(false);
    const progress: string[] = [];
    const summary = await cache.ensure(tiny, (line) => progress.push(line));

    const dir = cache.dir(tiny);
    expect(dir).toBe(join(cache.root, installKey(tiny)));
    expect(cache.isInstalled(tiny)).toBe(true);
    expect(existsSync(join(dir, installedMarker))).toBe(true);
    const manifest = join(dir, 'node_modules', 'is-number', 'package.json');
    expect(JSON.parse(await readFile(manifest, 'utf8')).version).toBe('7.0.0');
    // Sandboxes run as another user: the install's folder itself (made by mkdtemp, 0700) must open to all.
    expect((await stat(dir)).mode & 0o555).toBe(0o555);
    expect((await stat(manifest)).mode & 0o444).toBe(0o444);
    // Nothing else is left under the root: the temporary folder was renamed into place.
    expect(await readdir(cache.root)).toEqual([installKey(tiny)]);

    expect(progress[0]).toBe('installing is-number@7.0.0');
    expect(summary).toMatch(/^installed in \d+\.\d s \(\d+\.\d MB\)$/);
    expect(logged.at(-1)).toContain(`harness install ${installKey(tiny)}: installed in`);

    // A second ensure, and a new cache over the same root (another process), find it installed.
    const again: string[] = [];
    const before = Date.now();
    expect(await cache.ensure(tiny, (line) => again.push(line))).toBeUndefined();
    await new ProgramCache(cache.root).ensure(tiny, (line) => again.push(line));
    expect(again).toEqual([]);
    expect(Date.now() - before).toBeLessThan(50);
  });

  it('drops the temporary folder of an install a crashed process left long ago, not a recent one', async () => {
    const { cache } = await newCache();
    const key = installKey(tiny);
    const old = join(cache.root, `.tmp-${key}-old`);
    const recent = join(cache.root, `.tmp-${key}-recent`);
    await mkdir(old, { recursive: true });
    await mkdir(recent);
    const longAgo = new Date(Date.now() - 60 * 60_000);
    await utimes(old, longAgo, longAgo);
    await cache.ensure(tiny);
    expect((await readdir(cache.root)).sort()).toEqual([`.tmp-${key}-recent`, key].sort());
  });

  it('shares one install between concurrent ensures of the same packages', async () => {
    const { cache, logged } = await newCache();
    const progress: string[] = [];
    const summaries = await Promise.all([
      cache.ensure(tiny, (line) => progress.push(`a ${line}`)),
      cache.ensure(tiny, (line) => progress.push(`b ${line}`)),
      cache.ensure({ packages: { 'is-number': '7.0.0' } }),
    ]);
    expect(cache.isInstalled(tiny)).toBe(true);
    expect(logged.filter((line) => line.includes(': installing '))).toHaveLength(1);
    expect(new Set(summaries).size).toBe(1);
    expect(progress).toContain('a installing is-number@7.0.0');
    // The second caller joined the first's install, and heard so.
    expect(progress).toContain('b waiting for the install under way');
    expect(await readdir(cache.root)).toEqual([installKey(tiny)]);
  });

  it('fails with npm’s reason on a version that does not exist, and leaves nothing behind', async () => {
    const { cache } = await newCache();
    const bogus = { packages: { 'is-number': '999.0.0' } };
    await expect(cache.ensure(bogus)).rejects.toThrow(
      /npm install is-number@999\.0\.0 failed: ETARGET .*999\.0\.0/,
    );
    expect(cache.isInstalled(bogus)).toBe(false);
    expect(await readdir(cache.root)).toEqual([]);
    // Not a stuck single flight: the next try runs npm again.
    await expect(cache.ensure(bogus)).rejects.toThrow(/ETARGET/);
  });

  it('fails with the reason when npm itself cannot run', async () => {
    const root = await tempDir('paddock-program-cache-');
    roots.push(root);
    const cache = new ProgramCache(root, { npm: join(root, 'no-such-npm') });
    await expect(cache.ensure(tiny)).rejects.toThrow(/cannot run .*no-such-npm: .*ENOENT/);
    expect((await readdir(root)).filter((name) => name.startsWith('.tmp-'))).toEqual([]);
  });

  it('reads npm’s error lines for the code and what happened', () => {
    expect(
      npmReason([
        'code ENOTFOUND',
        'syscall getaddrinfo',
        'errno ENOTFOUND',
        'network request to https://registry.example/is-number failed, reason: getaddrinfo ENOTFOUND registry.example',
        'A complete log of this run can be found in: /root/.npm/_logs/x.log',
      ]),
    ).toBe(
      'ENOTFOUND network request to https://registry.example/is-number failed, reason: getaddrinfo ENOTFOUND registry.example',
    );
    expect(npmReason([])).toBe('npm exited with an error');
  });

  it('fails with ENOTFOUND when the registry cannot be reached', async () => {
    const { cache } = await newCache();
    // npm reads its settings from the environment: a registry whose name never resolves (RFC 6761).
    const saved = {
      registry: process.env.npm_config_registry,
      retries: process.env.npm_config_fetch_retries,
    };
    process.env.npm_config_registry = 'http://registry.invalid/';
    process.env.npm_config_fetch_retries = '0';
    try {
      await expect(cache.ensure(tiny)).rejects.toThrow(/failed: ENOTFOUND .*registry\.invalid/);
    } finally {
      restore('npm_config_registry', saved.registry);
      restore('npm_config_fetch_retries', saved.retries);
    }
    expect(await readdir(cache.root)).toEqual([]);
  }, 60_000);
});

function restore(name: string, value: string | undefined): void {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}
