import { chmod, mkdir, mkdtemp, rm, rmdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A scratch directory for one test file. Mode 0700, like the server's data dir, so the tests prove
 * that sandboxes do not depend on the sandbox uid being able to reach it.
 */
export async function makeTempRoot(
  label: string,
): Promise<{ path: string; dir(name: string): Promise<string>; remove(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), `paddock-${label}-`));
  await chmod(path, 0o700);
  return {
    path,
    async dir(name) {
      const dir = join(path, name);
      await mkdir(dir, { recursive: true });
      return dir;
    },
    remove: () => rm(path, { recursive: true, force: true }),
  };
}

/** A cgroup parent name no other test file or run shares. */
export function testCgroupParent(label: string): string {
  return `paddock-test-${label}-${process.pid}`;
}

/** Removes a test's cgroup parents once every sandbox under them is gone. */
export async function removeCgroupParent(mount: string, parent: string): Promise<void> {
  for (const controller of ['memory', 'cpu', 'pids', 'freezer']) {
    await rmdir(join(mount, controller, parent)).catch(() => {});
  }
}
