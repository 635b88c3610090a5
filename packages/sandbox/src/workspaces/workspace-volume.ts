import { randomBytes } from 'node:crypto';
import { link, open, rmdir, stat, unlink } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import { type HostCommand, runHostCommand } from '../host-commands/host-commands.ts';
import { mount, mountPoints, unmountAll } from '../mounts.ts';

/**
 * A workspace's disk quota is the size of a filesystem of its own: a sparse ext4 image, loop-mounted
 * at the workspace directory. A write past it fails with ENOSPC inside the sandbox, and the host
 * spends only the blocks written (`discard` gives deleted ones back). Needs root.
 */

/**
 * Makes the image at `image`, its root owned by `uid`, unless one is there already; answers whether
 * this call made it. Made aside and linked into place, so two processes never mount two images of
 * one workspace, nor a half-made one.
 */
export async function makeVolumeImage(image: string, bytes: number, uid: number): Promise<boolean> {
  const scratch = `${image}.new-${randomBytes(4).toString('hex')}`;
  const file = await open(scratch, 'wx', 0o600);
  try {
    await file.truncate(bytes);
    await file.close();
    // -m 0: the sandbox is not root, so blocks reserved for root would only shrink its quota.
    // Lazy init keeps mkfs at a few ms whatever the size: the tables are zeroed on first use.
    await run('mkfs.ext4', [
      '-q',
      '-F',
      '-m',
      '0',
      '-E',
      `root_owner=${uid}:${uid},lazy_itable_init=1,lazy_journal_init=1`,
      scratch,
    ]);
    await link(scratch, image);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    await file.close().catch(() => {});
    await unlink(scratch).catch(() => {});
  }
}

/**
 * The workspace is the volume's root, so a new one lists nothing: mkfs's `lost+found` goes, once the
 * volume that was just made is mounted and before any sandbox has it (fsck makes it again if needed).
 */
export async function clearNewVolume(dir: string): Promise<void> {
  await rmdir(join(dir, 'lost+found')).catch(() => {});
}

/** Mounts the image at `dir`; nosuid and nodev, so nothing on it can raise privileges on the host. */
export async function mountVolume(image: string, dir: string): Promise<void> {
  // mount(8) reuses the loop device an image already has, so a second mount of one image (by another
  // process, or in a sandbox's namespace) is the same filesystem, never a second one over the file.
  await mount(['-t', 'ext4', '-o', 'loop,nosuid,nodev,noatime,discard', image, dir]);
}

/** Shows the volume mounted at `from` at `to` as well (the same filesystem, on the same loop device). */
export async function bindVolume(from: string, to: string): Promise<void> {
  await mount(['--bind', from, to]);
}

/** Whether a filesystem is mounted at `dir` (it sits on another device than its parent). */
export async function isMountPoint(dir: string): Promise<boolean> {
  const [own, parent] = await Promise.all([stat(dir), stat(dirname(dir))]);
  return own.dev !== parent.dev || own.ino === parent.ino;
}

/**
 * Unmounts every volume mounted under `root`, deepest first: what a killed server or runner left, or
 * what must go before a data dir is removed (`rm -r` would descend into a mounted volume).
 */
export async function releaseVolumesUnder(root: string): Promise<void> {
  const prefix = root.endsWith(sep) ? root : `${root}${sep}`;
  const points = (await mountPoints()).filter((point) => point.startsWith(prefix));
  for (const point of points.sort((a, b) => b.length - a.length)) await unmountAll(point);
}

async function run(command: HostCommand, args: string[]): Promise<void> {
  const { code, stderr } = await runHostCommand(command, args);
  if (code !== 0) throw new Error(`${command} ${args.join(' ')} failed: ${stderr.trim()}`);
}
