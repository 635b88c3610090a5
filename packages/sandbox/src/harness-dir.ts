import { chmod, mkdir, stat } from 'node:fs/promises';
import type { CodeDir } from './code-paths.ts';
import { sandboxPaths } from './sandbox-paths.ts';

/**
 * The runner's program cache (ProgramCache's root) as the read-only directory a provider shows at
 * /opt/paddock/harnesses. Bound as it is, not through a read-only view: a program installed after a
 * sandbox booted (a standby's first ACP turn) must show in it, which a bind of the live directory
 * does. Made before the first boot, open to the sandboxes' uids.
 */
export async function harnessCodeDir(hostDir: string | undefined): Promise<CodeDir[]> {
  if (hostDir === undefined) return [];
  await mkdir(hostDir, { recursive: true, mode: 0o755 });
  const { mode } = await stat(hostDir);
  if ((mode & 0o555) !== 0o555) await chmod(hostDir, (mode & 0o7777) | 0o555);
  return [{ host: hostDir, inside: sandboxPaths.harnesses }];
}
