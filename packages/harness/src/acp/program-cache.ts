import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, lstat, mkdir, mkdtemp, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { HarnessProfile } from '@paddock/protocol';
import { installKey } from './catalog.ts';

/** Written last into an install: its presence proves the install is complete. */
export const installedMarker = '.paddock-installed';
/** Where every provider shows the cache inside a sandbox (read-only). */
export const sandboxHarnessDir = '/opt/paddock/harnesses';

/** At most one progress line this often, however fast npm fetches. */
const progressEveryMs = 1_000;
/** A stuck registry must not hold a turn forever. */
const installTimeoutMs = 15 * 60_000;

export interface ProgramCacheOptions {
  log?: (line: string) => void;
  /** The npm command (default `npm` on the PATH). */
  npm?: string;
}

type Profile = Pick<HarnessProfile, 'packages'>;

/**
 * The runner's shared cache of ACP programs (D9), one folder per set of pinned packages. The host
 * installs into it from the npm registry; sandboxes see it read-only. An install goes into a temporary
 * folder under the root and is renamed into place once complete, so a reader never sees half of one
 * and two processes installing at once cannot mix their files (the loser of the rename drops its copy).
 */
export class ProgramCache {
  readonly root: string;
  readonly #log: (line: string) => void;
  readonly #npm: string;
  /** Installs known complete: a turn after the first checks no disk. */
  readonly #installed = new Set<string>();
  /** One install per key at a time in this process; later callers wait for it, and hear its progress. */
  readonly #inFlight = new Map<string, { done: Promise<string>; listeners: Set<(line: string) => void> }>();

  constructor(root: string, options: ProgramCacheOptions = {}) {
    this.root = root;
    this.#log = options.log ?? (() => {});
    this.#npm = options.npm ?? 'npm';
  }

  dir(profile: Profile): string {
    return join(this.root, installKey(profile));
  }

  isInstalled(profile: Profile): boolean {
    const key = installKey(profile);
    if (this.#installed.has(key)) return true;
    if (!existsSync(join(this.root, key, installedMarker))) return false;
    this.#installed.add(key);
    return true;
  }

  /**
   * Installs the profile's packages unless they are; `onProgress` hears short lines for people while
   * it runs (also when it joins an install under way). Answers the install's summary (time and size),
   * or undefined when the packages were installed already. Throws an Error whose message is the reason
   * when the install fails (nothing is left in place).
   */
  async ensure(profile: Profile, onProgress: (line: string) => void = () => {}): Promise<string | undefined> {
    if (this.isInstalled(profile)) return undefined;
    const key = installKey(profile);
    let install = this.#inFlight.get(key);
    if (install) onProgress('waiting for the install under way');
    else {
      const listeners = new Set<(line: string) => void>();
      const done = this.#install(key, profile, (line) => {
        for (const listener of listeners) listener(line);
      }).finally(() => this.#inFlight.delete(key));
      install = { done, listeners };
      this.#inFlight.set(key, install);
    }
    install.listeners.add(onProgress);
    try {
      return await install.done;
    } finally {
      install.listeners.delete(onProgress);
    }
  }

  async #install(key: string, profile: Profile, onProgress: (line: string) => void): Promise<string> {
    const pins = Object.entries(profile.packages).map(([name, version]) => `${name}@${version}`);
    const say = (line: string) => {
      onProgress(line);
      this.#log(`harness install ${key}: ${line}`);
    };
    const started = Date.now();
    await mkdir(this.root, { recursive: true, mode: 0o755 });
    await this.#dropAbandoned(key);
    const temp = await mkdtemp(join(this.root, `.tmp-${key}-`));
    try {
      say(`installing ${pins.join(' ')}`);
      await this.#npmInstall(temp, pins, say);
      const bytes = await readableByAll(temp);
      await writeFile(join(temp, installedMarker), `${JSON.stringify(profile.packages)}\n`, { mode: 0o644 });
      await this.#moveIntoPlace(temp, join(this.root, key));
      this.#installed.add(key);
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      const summary = `installed in ${seconds} s (${(bytes / 1e6).toFixed(1)} MB)`;
      this.#log(`harness install ${key}: ${summary}`);
      return summary;
    } catch (error) {
      this.#log(`harness install ${key}: failed: ${(error as Error).message}`);
      throw error;
    } finally {
      await rm(temp, { recursive: true, force: true });
    }
  }

  /**
   * Temporary folders of installs that a crashed process left: older than any install may take, so
   * no live installer (here or in another process) still writes to them.
   */
  async #dropAbandoned(key: string): Promise<void> {
    for (const name of await readdir(this.root)) {
      if (!name.startsWith(`.tmp-${key}-`)) continue;
      const path = join(this.root, name);
      const changed = await lstat(path).then(
        (stat) => stat.mtimeMs,
        () => Date.now(),
      );
      if (Date.now() - changed > installTimeoutMs) await rm(path, { recursive: true, force: true });
    }
  }

  async #moveIntoPlace(temp: string, target: string): Promise<void> {
    try {
      await rename(temp, target);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
      // Another process finished first: its copy is as good as ours.
      if (existsSync(join(target, installedMarker))) return;
      // A folder without the marker is no install of ours (renames move complete ones only).
      await rm(target, { recursive: true, force: true });
      await rename(temp, target);
    }
  }

  /** Runs npm, reporting how many packages it has fetched at most once a second. */
  #npmInstall(prefix: string, pins: string[], say: (line: string) => void): Promise<void> {
    const args = [
      'install',
      '--prefix',
      prefix,
      '--no-audit',
      '--no-fund',
      // Never run a third-party install script as the host's user: the programs work without them.
      '--ignore-scripts',
      '--no-update-notifier',
      '--loglevel=http',
      ...pins,
    ];
    const child = spawn(this.#npm, args, { stdio: ['ignore', 'ignore', 'pipe'], cwd: prefix });
    const errors: string[] = [];
    let fetched = 0;
    let reported = 0;
    let lastReport = Date.now();
    createInterface({ input: child.stderr }).on('line', (line) => {
      if (/^npm http fetch GET 200 /.test(line)) {
        fetched++;
        if (Date.now() - lastReport >= progressEveryMs && fetched !== reported) {
          say(`fetched ${fetched} packages`);
          reported = fetched;
          lastReport = Date.now();
        }
      } else if (/^npm (error|ERR!) /.test(line)) errors.push(line.replace(/^npm (error|ERR!) /, ''));
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), installTimeoutMs);
    return new Promise<void>((resolve, reject) => {
      child.on('error', (error) => reject(new Error(`cannot run ${this.#npm}: ${error.message}`)));
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        if (code === 0) resolve();
        else if (signal) reject(new Error(`npm install ${pins.join(' ')} stopped (${signal})`));
        else reject(new Error(`npm install ${pins.join(' ')} failed: ${npmReason(errors)}`));
      });
    });
  }
}

/**
 * npm's reason, from its error lines: the code (E404, ENOTFOUND, ETARGET...) and the first line that
 * says what happened, not the syscall, errno or log file ones.
 */
export function npmReason(errors: string[]): string {
  const code = errors.map((line) => /^code (\S+)/.exec(line)?.[1]).find(Boolean);
  const said = errors.find(
    (line) =>
      line.trim() !== '' &&
      !/^(code|errno|syscall|path|dest|A complete log|Log files were not written|You can rerun)\b/.test(line),
  );
  const parts = [code, said?.trim()].filter(Boolean);
  return parts.length > 0 ? parts.join(' ') : 'npm exited with an error';
}

/**
 * Sandboxes run as an unprivileged user: everything installed must be readable by all, and what its
 * owner may run runnable by all. Returns the install's size in bytes.
 */
async function readableByAll(dir: string): Promise<number> {
  let bytes = 0;
  const walk = async (path: string): Promise<void> => {
    const stat = await lstat(path);
    if (stat.isSymbolicLink()) return;
    const mode = stat.mode & 0o7777;
    if (stat.isDirectory()) {
      if ((mode & 0o555) !== 0o555) await chmod(path, mode | 0o555);
      for (const name of await readdir(path)) await walk(join(path, name));
      return;
    }
    bytes += stat.size;
    const wanted = mode | 0o444 | (mode & 0o100 ? 0o111 : 0);
    if (wanted !== mode) await chmod(path, wanted);
  };
  await walk(dir);
  return bytes;
}
