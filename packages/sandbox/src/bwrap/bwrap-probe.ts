import { access, constants } from 'node:fs/promises';
import { runToExit } from '../run-to-exit.ts';
import { launchBwrap } from './bwrap-launch.ts';

const probeTimeoutMs = 5_000;
const searchedPaths = ['/usr/bin/bwrap', '/usr/local/bin/bwrap', '/bin/bwrap'];

export async function findBwrap(): Promise<string | undefined> {
  for (const path of searchedPaths) {
    if (await isExecutable(path)) return path;
  }
  return undefined;
}

export async function isExecutable(path: string): Promise<boolean> {
  return access(path, constants.X_OK).then(
    () => true,
    () => false,
  );
}

/**
 * Starts a throwaway sandbox the way real ones start (same namespaces, same privilege drop), so a
 * host where bwrap cannot set up its namespaces is found out before a thread needs a sandbox.
 */
export async function probeBwrap(launch: {
  bwrapPath: string;
  setprivPath: string;
  privileged: boolean;
  uid?: number;
  seccomp?: Buffer;
}): Promise<{ ok: true } | { ok: false; reason: string }> {
  const child = launchBwrap({
    ...launch,
    options: ['--ro-bind', '/usr', '/usr', '--proc', '/proc', '--dev', '/dev'].concat(
      ...['bin', 'lib', 'lib64'].map((dir) => ['--symlink', `usr/${dir}`, `/${dir}`]),
    ),
    command: ['/usr/bin/true'],
  });
  try {
    const { code, stderr } = await runToExit(child, probeTimeoutMs, 'bwrap probe');
    return code === 0
      ? { ok: true }
      : { ok: false, reason: `bwrap probe exited with ${code}: ${stderr.trim()}` };
  } catch (error) {
    return { ok: false, reason: (error as Error).message };
  }
}
