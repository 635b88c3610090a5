import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type HostCommand, runHostCommand } from '../src/host-commands/host-commands.ts';
import { makeTempRoot } from './temp-root.ts';

describe("host commands (the runner's mount, umount and mkfs.ext4, in a process of their own)", () => {
  it("answers a command's exit code and what it wrote to stderr", async () => {
    const { code, stderr } = await runHostCommand('mount', ['--no-such-option']);
    expect(code).not.toBe(0);
    expect(stderr).toMatch(/unrecognized option|unknown option|invalid option/);
  });

  it('runs commands side by side, each answered as its own', async () => {
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => runHostCommand('mount', i % 2 ? ['--version'] : ['--bad-option'])),
    );
    expect(results.map((result) => result.code === 0)).toEqual(
      Array.from({ length: 8 }, (_, i) => i % 2 === 1),
    );
  });

  it('refuses any other program', async () => {
    await expect(runHostCommand('sh' as HostCommand, ['-c', 'true'])).rejects.toThrow(
      "not a command of the runner's: sh",
    );
  });

  it('kills a command that outlives its time', async () => {
    const root = await makeTempRoot('host-commands');
    try {
      // mkfs.ext4 given a FIFO for its device waits to read from it forever.
      const fifo = join(root.path, 'never-written');
      execFileSync('mkfifo', [fifo]);
      await expect(runHostCommand('mkfs.ext4', ['-q', '-F', fifo], 300)).rejects.toThrow(
        'mkfs.ext4 timed out',
      );
    } finally {
      await root.remove();
    }
  });
});
