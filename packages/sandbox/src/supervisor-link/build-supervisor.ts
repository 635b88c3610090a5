import { chmod, copyFile, lstat, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { supervisorBinary, supervisorSourceDir } from '@paddock/supervisor';
import { buildGoProgram, exists } from '../build-go-program.ts';

/**
 * Builds the supervisor a sandbox runs into `outDir`, which a provider shows read-only in the
 * sandbox: one static program (Go, its standard library only), so a sandbox needs nothing of
 * Paddock's and no runtime to start it, and a burst of sandboxes does not wait on a hundred Node
 * starts. Built once per version of its sources (see build-go-program.ts), then copied. Answers
 * the program's path.
 */
export async function buildSupervisor(outDir: string): Promise<string> {
  const built = await buildGoProgram(supervisorSourceDir, supervisorBinary);
  await clearEarlierBuild(outDir);
  await mkdir(outDir, { recursive: true, mode: 0o755 });
  const target = join(outDir, supervisorBinary);
  await copyFile(built, target);
  await chmod(target, 0o755);
  await writeFile(join(outDir, buildMarker), '', { mode: 0o644 });
  await chmod(outDir, 0o755);
  return target;
}

/** The file a build leaves in its folder: the only folder a later build removes. */
const buildMarker = '.paddock-supervisor-build';

/** Removes an earlier build at `outDir`; refuses anything else there (a wrong path must not cost a file). */
async function clearEarlierBuild(outDir: string): Promise<void> {
  const found = await lstat(outDir).catch(() => undefined);
  if (!found) return;
  const earlier =
    found.isDirectory() &&
    ((await readdir(outDir)).length === 0 || (await exists(join(outDir, buildMarker))));
  if (!earlier) throw new Error(`${outDir} is not an earlier build of the supervisor: not replaced`);
  await rm(outDir, { recursive: true, force: true });
}
