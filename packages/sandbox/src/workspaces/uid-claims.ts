import { randomInt } from 'node:crypto';
import { mkdir, open, unlink } from 'node:fs/promises';
import { join } from 'node:path';

/** The host uids sandboxes run as: `count` uids from `base`, none shared with the host's own users. */
export interface UidRange {
  base: number;
  count: number;
}

export const defaultUidRange: UidRange = { base: 200_000, count: 65_536 };

/**
 * Which uids of the range are taken: one file per uid, made with O_EXCL, so two processes on one
 * data dir (the server and a detached runner) never hand out the same uid. Which workspace holds a
 * uid is recorded by the workspace itself (its owner); the file's content only says who claimed it.
 */
export class UidClaims {
  readonly #dir: string;
  readonly #range: UidRange;

  constructor(dir: string, range: UidRange) {
    if (range.base < 1000 || range.count < 1)
      throw new Error('the sandbox uid range must start at 1000 or above');
    this.#dir = dir;
    this.#range = range;
  }

  /** A free uid of the range, now claimed for `holder` (a workspace path). */
  async claim(holder: string): Promise<number> {
    await mkdir(this.#dir, { recursive: true, mode: 0o700 });
    const { base, count } = this.#range;
    // A random start spreads processes that claim at once over the range instead of racing on one file.
    const start = randomInt(count);
    for (let i = 0; i < count; i++) {
      const uid = base + ((start + i) % count);
      try {
        const file = await open(join(this.#dir, String(uid)), 'wx', 0o600);
        await file.writeFile(`${holder}\n`);
        await file.close();
        return uid;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
    }
    throw new Error(`every sandbox uid of ${base}..${base + count - 1} is taken`);
  }

  async release(uid: number): Promise<void> {
    await unlink(join(this.#dir, String(uid))).catch(() => {});
  }

  contains(uid: number): boolean {
    return uid >= this.#range.base && uid < this.#range.base + this.#range.count;
  }
}
