import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../../..');

/**
 * `paddock runner` has its own entry point: started as the README starts it (`npm run runner`, and
 * `node apps/server/src/main.ts runner`), it loads the runner's modules and none of the server's
 * (core, the store, the turn worker), which a runner on a user's machine has no use for.
 */
describe('paddock runner', () => {
  let dir: string;
  let hook: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'paddock-runner-entry-'));
    // Records every module loaded, written out as the process exits.
    hook = join(dir, 'record-modules.mjs');
    await writeFile(
      hook,
      [
        "import { registerHooks } from 'node:module';",
        "import { writeFileSync } from 'node:fs';",
        'const loaded = [];',
        'registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });',
        `process.on('exit', () => writeFileSync(${JSON.stringify(join(dir, 'loaded.json'))}, JSON.stringify(loaded)));`,
      ].join('\n'),
    );
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function modulesOf(args: string[]): Promise<{ loaded: string[]; stderr: string; code: number }> {
    // No runner token anywhere: the runner stops with one line, after its modules have loaded.
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', PADDOCK_DATA_DIR: join(dir, 'data') };
    const outcome = await promisify(execFile)(process.execPath, ['--import', hook, ...args], {
      env,
      cwd: root,
    }).then(
      () => ({ stderr: '', code: 0 }),
      (error: { stderr: string; code: number }) => ({ stderr: error.stderr, code: error.code }),
    );
    const loaded = JSON.parse(await readFile(join(dir, 'loaded.json'), 'utf8')) as string[];
    return { loaded, ...outcome };
  }

  it.each([
    ['runner.ts', ['apps/server/src/runner.ts']],
    ['main.ts runner', ['apps/server/src/main.ts', 'runner']],
  ])('loads the runner and nothing of the server (%s)', async (_, args) => {
    const { loaded, stderr, code } = await modulesOf(args);
    expect(code).toBe(2);
    expect(stderr).toContain('no PADDOCK_RUNNER_TOKEN');
    // It did load the runner: the sandboxes' host side and the harnesses.
    expect(loaded.some((url) => url.includes('/packages/sandbox/src/runner.ts'))).toBe(true);
    expect(loaded.some((url) => url.includes('/packages/harness/src/'))).toBe(true);
    const servers = loaded.filter((url) =>
      /\/packages\/(core|store|runtime)\/|\/apps\/server\/src\/(startup\/paddock|http)\//.test(url),
    );
    expect(servers).toEqual([]);
  });
});
