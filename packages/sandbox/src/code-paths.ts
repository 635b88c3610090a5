import { realpathSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const sourceDir = dirname(fileURLToPath(import.meta.url));

/** The supervisor's entry file, on the host and (bound at the same path) inside the sandbox. */
export const supervisorMain = join(sourceDir, 'supervisor', 'main.ts');

/**
 * What a sandbox needs to run the supervisor and import `@paddock/harness`: the project's packages/
 * and node_modules/ (never the project root, where the data dir with the database and keys may live)
 * and the Node binary when it lives elsewhere.
 */
export function defaultCodePaths(nodePath: string): string[] {
  const projectRoot = resolve(sourceDir, '..', '..', '..');
  const dirs = [join(projectRoot, 'packages'), join(projectRoot, 'node_modules')];
  const node = realpathSync(nodePath);
  const covered = dirs.some((dir) => !relative(dir, node).startsWith(`..${sep}`));
  return covered ? dirs : [...dirs, node];
}
