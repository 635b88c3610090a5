import { createWriteStream } from 'node:fs';
import { lchown, lstat, mkdir, realpath, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { PaddockError } from '../errors.ts';
import { resolveFileTarget } from './workspace-target.ts';

export interface LandFile {
  workspaceDir: string;
  /** Relative to the workspace. */
  path: string;
  source: Readable;
  size: number;
  /** Distinguishes the temporary file of this landing from any other. */
  tempTag: string;
  /** The uid and gid the file and the directories made for it get; undefined leaves them as made. */
  owner?: number;
}

/**
 * Puts a file at its path in the workspace whole or not at all: the bytes go to a temporary file in
 * the target's own directory (so on the workspace's filesystem), which is then renamed over the
 * path. Missing parent directories are made. The path is confined to the workspace when resolved
 * and again right before the rename, so a symlink planted meanwhile cannot carry the file out.
 * Answers the host path the file landed at.
 */
export async function landFile(land: LandFile): Promise<string> {
  const { absolute } = await resolveFileTarget(land.workspaceDir, land.path);
  const dir = path.dirname(absolute);
  const firstMade = await mkdir(dir, { recursive: true });
  const realDir = await realpath(dir);
  const temp = path.join(realDir, `.paddock-upload-${land.tempTag}`);
  const landed = path.join(realDir, path.basename(absolute));
  try {
    // A leftover of an earlier try goes first; `wx` then refuses to follow anything planted there since.
    await rm(temp, { force: true });
    await pipeline(land.source, createWriteStream(temp, { flags: 'wx', mode: 0o644, flush: true }));
    const written = (await lstat(temp)).size;
    if (written !== land.size) throw new Error(`upload holds ${written} bytes, not ${land.size}`);
    if (land.owner !== undefined) {
      await lchown(temp, land.owner, land.owner);
      if (firstMade) await chownMadeDirs(dir, firstMade, land.owner);
    }
    const recheck = await resolveFileTarget(land.workspaceDir, land.path);
    if ((await realpath(path.dirname(recheck.absolute))) !== realDir) {
      throw new PaddockError('invalid_path', `path changed while the upload landed: ${land.path}`);
    }
    await rename(temp, landed);
    return landed;
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

/** The directories `mkdir -p` made for the file, from its own up to the first one made. */
async function chownMadeDirs(dir: string, firstMade: string, owner: number): Promise<void> {
  for (let current = dir; ; current = path.dirname(current)) {
    await lchown(current, owner, owner);
    if (current === firstMade || current === path.dirname(current)) return;
  }
}
