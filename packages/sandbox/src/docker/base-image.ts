import { spawn } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { runToExit } from '../run-to-exit.ts';
import type { DockerEngine } from './engine.ts';

export const defaultSandboxImage = 'paddock-sandbox:bookworm';

/**
 * Debian packages every image gets beyond `minbase`: what the coding-agent programs need of the
 * system (Codex's native binary links OpenSSL 3).
 */
export const baseImagePackages = ['libssl3'];

export interface RootfsOptions {
  /** Debian suite. Default `bookworm`. */
  suite?: string;
  /** The Debian mirror; default debootstrap's own (deb.debian.org). */
  mirror?: string;
  /** Extra packages beyond `minbase` and `baseImagePackages` (e.g. python3, git, ca-certificates). */
  include?: string[];
  debootstrapPath?: string;
  /** Lines of debootstrap's progress. */
  onProgress?: (line: string) => void;
}

/** Written into the image, so a sandbox (and a test) can tell which image it runs. */
export const imageMarkerPath = '/etc/paddock-sandbox-image';

const debootstrapTimeoutMs = 30 * 60_000;
const tarTimeoutMs = 10 * 60_000;

/**
 * Builds a Debian root filesystem with `debootstrap --variant=minbase` (packages from the Debian
 * mirror only; no container registry) and packs it into a tarball at `tarPath` for `docker import`.
 * Needs root (debootstrap does).
 */
export async function buildRootfsTarball(tarPath: string, options: RootfsOptions = {}): Promise<void> {
  const suite = options.suite ?? 'bookworm';
  await mkdir(dirname(tarPath), { recursive: true });
  const work = await mkdtemp(join(dirname(tarPath), '.rootfs-'));
  const rootfs = join(work, 'rootfs');
  try {
    const packages = [...new Set([...baseImagePackages, ...(options.include ?? [])])];
    const args = ['--variant=minbase', `--include=${packages.join(',')}`];
    args.push(suite, rootfs);
    if (options.mirror) args.push(options.mirror);
    const debootstrap = spawn(options.debootstrapPath ?? '/usr/sbin/debootstrap', args, {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    debootstrap.stdout.setEncoding('utf8');
    debootstrap.stdout.on('data', (text: string) => {
      for (const line of text.split('\n')) if (line.trim()) options.onProgress?.(line);
    });
    const built = await runToExit(debootstrap, debootstrapTimeoutMs, 'debootstrap');
    if (built.code !== 0) throw new Error(`debootstrap exited with ${built.code}: ${built.stderr.trim()}`);
    const marker = `suite=${suite}\nvariant=minbase\npackages=${packages.join(',')}\nbuilt=${new Date().toISOString()}\n`;
    await writeFile(join(rootfs, imageMarkerPath), marker, { mode: 0o644 });
    // The downloaded packages and lists are of no use in a read-only sandbox.
    for (const dir of ['var/cache/apt/archives', 'var/lib/apt/lists']) {
      await rm(join(rootfs, dir), { recursive: true, force: true });
      await mkdir(join(rootfs, dir, 'partial'), { recursive: true });
    }
    const partial = `${tarPath}.partial`;
    const tar = spawn('tar', ['--numeric-owner', '-C', rootfs, '-cf', partial, '.'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const packed = await runToExit(tar, tarTimeoutMs, 'tar');
    if (packed.code !== 0) throw new Error(`tar exited with ${packed.code}: ${packed.stderr.trim()}`);
    await rename(partial, tarPath);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** `docker import` of a root filesystem tarball as `image` (repo:tag). */
export async function importBaseImage(engine: DockerEngine, image: string, tarPath: string): Promise<void> {
  await engine.importImage(image, createReadStream(tarPath), ['LABEL dev.paddock.base=1']);
}
