import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { access, mkdir, readdir, readFile, rename } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

const goSettings = ['CGO_ENABLED=0', 'GOPROXY=off', 'GOFLAGS=-mod=mod', 'GOTOOLCHAIN=local'];

/** Builds of this process, by their cache path: concurrent callers share one `go build`. */
const building = new Map<string, Promise<string>>();

/**
 * The Go program in `sourceDir` (its standard library only), built static into the user's cache
 * once per version of its sources: the first build takes Go some seconds (it compiles its own
 * standard library once), later ones find it there. Answers the program's path. Paddock's Go
 * programs: the sandbox's supervisor and the runner's host commands.
 */
export function buildGoProgram(sourceDir: string, binary: string): Promise<string> {
  return sourcesDigest(sourceDir).then((digest) => {
    const cacheRoot = join(homedir(), '.cache', 'paddock', 'go');
    const built = join(cacheRoot, `${binary}-${digest}`, binary);
    let pending = building.get(built);
    if (!pending) {
      pending = buildInto(sourceDir, built);
      building.set(built, pending);
      pending.catch(() => building.delete(built));
    }
    return pending;
  });
}

async function buildInto(sourceDir: string, built: string): Promise<string> {
  if (await exists(built)) return built;
  await mkdir(dirname(built), { recursive: true });
  // Built aside and renamed into place: two servers building at once never run half a file.
  const scratch = `${built}.${process.pid}-${Date.now()}`;
  try {
    // Go's settings through env(1): the build inherits this process's environment (Go's own cache
    // and PATH) with these over it. Static, and nothing fetched.
    await run('env', [...goSettings, 'go', 'build', '-trimpath', '-ldflags=-s -w', '-o', scratch, '.'], {
      cwd: sourceDir,
    });
  } catch (error) {
    const { code, stderr } = error as { code?: number | string; stderr?: string };
    // env(1) answers 127 when it finds no `go`.
    if (code === 127 || code === 'ENOENT')
      throw new Error(`building ${sourceDir} needs Go 1.19 or later on PATH (Debian: golang-go)`);
    throw new Error(`building ${sourceDir} failed: ${stderr?.trim() || String(error)}`);
  }
  await rename(scratch, built);
  return built;
}

/** What a build depends on: every source file's name and content. */
async function sourcesDigest(sourceDir: string): Promise<string> {
  const hash = createHash('sha256');
  const names = (await readdir(sourceDir)).filter((name) => /\.go$|^go\.mod$/.test(name)).sort();
  for (const name of names) hash.update(`${name}\0`).update(await readFile(join(sourceDir, name)));
  return hash.digest('hex').slice(0, 16);
}

export function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}
