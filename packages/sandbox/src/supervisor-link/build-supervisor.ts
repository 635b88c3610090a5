import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  access,
  chmod,
  copyFile,
  lstat,
  mkdir,
  readdir,
  readFile,
  rename,
  rm,
  writeFile,
} from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { supervisorBinary, supervisorSourceDir } from '@paddock/supervisor';

const run = promisify(execFile);

/**
 * Builds the supervisor a sandbox runs into `outDir`, which a provider shows read-only in the
 * sandbox: one static program (Go, its standard library only), so a sandbox needs nothing of
 * Paddock's and no runtime to start it, and a burst of sandboxes does not wait on a hundred Node
 * starts. Built once per version of its sources into the user's cache (the first build takes Go
 * some seconds; later ones copy), then copied. Answers the program's path.
 */
export async function buildSupervisor(outDir: string): Promise<string> {
  const built = await cachedBuild();
  await clearEarlierBuild(outDir);
  await mkdir(outDir, { recursive: true, mode: 0o755 });
  const target = join(outDir, supervisorBinary);
  await copyFile(built, target);
  await chmod(target, 0o755);
  await writeFile(join(outDir, buildMarker), '', { mode: 0o644 });
  await chmod(outDir, 0o755);
  return target;
}

/** The program built from the sources as they are, from the cache or built now. */
async function cachedBuild(): Promise<string> {
  const cacheRoot = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'paddock', 'supervisor');
  const built = join(cacheRoot, await sourcesDigest(), supervisorBinary);
  if (await exists(built)) return built;
  await mkdir(join(built, '..'), { recursive: true });
  // Built aside and renamed into place: two servers building at once never run half a file.
  const scratch = `${built}.${process.pid}-${Date.now()}`;
  try {
    await run('go', ['build', '-trimpath', '-ldflags=-s -w', '-o', scratch, '.'], {
      cwd: supervisorSourceDir,
      env: { ...process.env, CGO_ENABLED: '0', GOPROXY: 'off', GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local' },
    });
  } catch (error) {
    const { code, stderr } = error as { code?: string; stderr?: string };
    if (code === 'ENOENT')
      throw new Error("building the sandbox's supervisor needs Go 1.19 or later on PATH (Debian: golang-go)");
    throw new Error(`building the sandbox's supervisor failed: ${stderr?.trim() || String(error)}`);
  }
  await rename(scratch, built);
  return built;
}

/** What the build depends on: every source file's name and content. */
async function sourcesDigest(): Promise<string> {
  const hash = createHash('sha256');
  const names = (await readdir(supervisorSourceDir)).filter((name) => /\.go$|^go\.mod$/.test(name)).sort();
  for (const name of names) hash.update(`${name}\0`).update(await readFile(join(supervisorSourceDir, name)));
  return hash.digest('hex').slice(0, 16);
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

function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}
