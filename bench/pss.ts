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
export function sandboxPssMiB(counted: (cmdline: string) => boolean = () => true): number[] {
  const sandboxes = new Map<string, number>();
  for (const pid of pids()) {
    const group = /:memory:\/paddock\/[^/]+\/((?!launcher-)[^/]+)$/m.exec(read(`/proc/${pid}/cgroup`))?.[1];
    const value = group && counted(read(`/proc/${pid}/cmdline`)) ? pss(pid) : undefined;
    if (group) sandboxes.set(group, (sandboxes.get(group) ?? 0) + (value ?? 0));
  }
  return [...sandboxes.values()];
}

/**
 * What Paddock itself holds in each live sandbox: bubblewrap's init and the supervisor, and none of
 * the program it runs (a coding agent) or that program's children.
 */
export function supervisorPssMiB(): number[] {
  const own = (cmdline: string) =>
    /^[^\0]*\/bwrap\0/.test(cmdline) || cmdline.includes('/supervisor/paddock-supervisor\0');
  const all = sandboxPssMiB();
  const supervisors = sandboxPssMiB(own);
  // Only the sandboxes that run a program of their own.
  return supervisors.filter((value, i) => all[i]! - value > 1);
}
