import { readFile, realpath } from 'node:fs/promises';
import { runHostCommand } from './host-commands/host-commands.ts';

/** mount(8) with these arguments; throws with its message when it fails. Needs root. */
export async function mount(args: string[]): Promise<void> {
  const { code, stderr } = await runHostCommand('mount', args);
  if (code !== 0) throw new Error(`mount ${args.join(' ')} failed: ${stderr.trim()}`);
}

/**
 * Takes every mount off `path`, one over the other, the top one first (lazily: a process may still
 * sit in it; a loop device frees itself). The mount table says when none is left, so the common case
 * is one umount(8), not one more that fails.
 */
export async function unmountAll(path: string): Promise<void> {
  const point = await realpath(path).catch(() => path);
  for (let i = 0; i < 4; i++) {
    const { code } = await runHostCommand('umount', ['--lazy', point]).catch(() => ({ code: 1 }));
    if (code !== 0 || !(await mountPoints()).includes(point)) return;
  }
}

/** The mount points in this process's mount table (`/proc/self/mountinfo`), each once. */
export async function mountPoints(): Promise<string[]> {
  const mountInfo = await readFile('/proc/self/mountinfo', 'utf8').catch(() => '');
  const points = mountInfo
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((point): point is string => point !== undefined)
    .map(unescapeMountPath);
  return [...new Set(points)];
}

/** mountinfo writes space, tab, newline and backslash as octal escapes. */
function unescapeMountPath(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}
