import { readdirSync, readFileSync } from 'node:fs';

/** A /proc file's text; empty where the process is gone or it cannot be read. */
function read(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/** A process's proportional set size in MiB (smaps_rollup), or undefined where it cannot be read. */
function pss(pid: string): number | undefined {
  const match = /^Pss:\s+(\d+) kB/m.exec(read(`/proc/${pid}/smaps_rollup`));
  return match ? Number(match[1]) / 1024 : undefined;
}

const pids = () => readdirSync('/proc').filter((name) => /^\d+$/.test(name));

/** The PSS in MiB of each process whose command line (NUL-separated) `match`es. */
export function pssMiB(match: (cmdline: string) => boolean): number[] {
  return pids()
    .filter((pid) => match(read(`/proc/${pid}/cmdline`)))
    .map(pss)
    .filter((value) => value !== undefined);
}

/**
 * Each live sandbox's PSS in MiB: the sum over the processes in its memory cgroup
 * (`…:memory:/paddock/<runner>/<sandbox>`, bubblewrap's). A standby keeps its name when a thread
 * takes it over, so the standby not yet taken is counted too; the launchers are not sandboxes.
 */
export function sandboxPssMiB(): number[] {
  const sandboxes = new Map<string, number>();
  for (const pid of pids()) {
    const group = /:memory:\/paddock\/[^/]+\/((?!launcher-)[^/]+)$/m.exec(read(`/proc/${pid}/cgroup`))?.[1];
    const value = group ? pss(pid) : undefined;
    if (group && value !== undefined) sandboxes.set(group, (sandboxes.get(group) ?? 0) + value);
  }
  return [...sandboxes.values()];
}
