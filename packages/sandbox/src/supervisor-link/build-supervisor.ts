import { access, chmod, lstat, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { stripTypeScriptTypes } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { supervisorEntry, supervisorSourceDir } from '@paddock/supervisor';
import { toCommonJs } from './to-common-js.ts';

/** A relative import of a TypeScript module, as the supervisor's sources write them. */
const tsSpecifier = /((?:from|import)\s*\(?\s*)(['"])(\.{1,2}\/[^'"]+)\.ts\2/g;
/** Every module a built file requires. */
const anySpecifier = /\brequire\((['"])([^'"]+)\1\)/g;

/**
 * Builds the supervisor a sandbox runs: its TypeScript with the types stripped (Node's own
 * stripping, so no build tool), as plain CommonJS in `outDir`, which a provider shows read-only
 * in the sandbox. Type stripping at run time would load a WebAssembly compiler into every sandbox
 * (some 13 MiB each). Refuses a source that imports anything but Node's builtins and its own files:
 * a sandbox has Node and this folder, nothing else. Answers the entry file's path.
 */
export async function buildSupervisor(outDir: string): Promise<string> {
  await clearEarlierBuild(outDir);
  for (const source of await sourcesOf(supervisorSourceDir)) {
    const name = relative(supervisorSourceDir, source);
    if (name === 'index.ts') continue;
    const code = toCommonJs(
      stripTypes(await readFile(source, 'utf8')).replace(tsSpecifier, '$1$2$3.js$2'),
      name,
    );
    for (const [, , specifier] of code.matchAll(anySpecifier)) {
      if (!specifier!.startsWith('node:') && !specifier!.startsWith('.'))
        throw new Error(`the supervisor's ${name} imports ${specifier}: it may import only node: builtins`);
    }
    const target = join(outDir, name.replace(/\.ts$/, '.js'));
    await mkdir(dirname(target), { recursive: true, mode: 0o755 });
    await writeFile(target, code, { mode: 0o644 });
  }
  // CommonJS, said once for the folder (see to-common-js.ts).
  await writeFile(join(outDir, 'package.json'), '{ "type": "commonjs" }\n', { mode: 0o644 });
  await writeFile(join(outDir, buildMarker), '', { mode: 0o644 });
  await chmod(outDir, 0o755);
  return join(outDir, supervisorEntry.replace(/\.ts$/, '.js'));
}

/**
 * Node's type stripping: the same Node runs the server's own TypeScript, where it is no longer
 * experimental, but as a function it still says so once, on stderr, which would be a line in every
 * server's log. That one warning is not passed on.
 */
function stripTypes(source: string): string {
  const emitWarning = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    if (String(warning).includes('stripTypeScriptTypes')) return;
    (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    return stripTypeScriptTypes(source);
  } finally {
    process.emitWarning = emitWarning;
  }
}

/** The file a build leaves in its folder: the only folder a later build removes. */
const buildMarker = '.paddock-supervisor-build';

/** Removes an earlier build at `outDir`; refuses anything else there (a wrong path must not cost a file). */
async function clearEarlierBuild(outDir: string): Promise<void> {
  const found = await lstat(outDir).catch(() => undefined);
  if (!found) return;
  const earlier =
    found.isDirectory() &&
    ((await readdir(outDir)).length === 0 ||
      (await access(join(outDir, buildMarker)).then(
        () => true,
        () => false,
      )));
  if (!earlier) throw new Error(`${outDir} is not an earlier build of the supervisor: not replaced`);
  await rm(outDir, { recursive: true, force: true });
}

async function sourcesOf(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await sourcesOf(path)));
    else if (entry.name.endsWith('.ts')) found.push(path);
  }
  return found;
}
