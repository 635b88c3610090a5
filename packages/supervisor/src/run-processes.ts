import { readdirSync, readFileSync, statSync } from 'node:fs';

/** The variable every process a turn or code run starts inherits: which run started it. */
export const runIdVariable = 'PADDOCK_RUN_ID';

/** A turn or a code run: its marker, and when it began and ended in clock ticks since boot. */
export interface Run {
  kind: 'turn' | 'code';
  marker: string;
  startTicks: number;
  endTicks?: number;
}

interface ProcessInfo {
  pid: number;
  ppid: number;
  uid: number;
  startTicks: number;
}

/** How long after a code run ended a process it marked still counts as its own (1 s, in clock ticks). */
const codeRunForkGraceTicks = 100;

/** Stop gives up after this many sweeps (a fork bomb outrunning it); each round kills what it finds. */
const maxSweeps = 50;

/**
 * Which process belongs to which run, so that a Stop kills every process the stopped turn started,
 * backgrounded ones included (`setsid`, `nohup … &`, a double fork), and nothing else.
 *
 * A turn's processes carry its marker in their environment, but a process can drop its
 * environment, so with the sandbox alone in its pid namespace (`ownPids`) the rule rests on what a
 * process cannot change: a process of the sandbox's uid is the stopped turn's when it started after
 * the turn began and neither it nor any ancestor (up to the supervisor or the namespace's init) is
 * older than the turn, or belongs to a code run (marked, and started while that run ran). So the
 * entrypoint's services, what earlier turns left running and their later children are spared;
 * a double fork, which makes init the parent, is not. Without a pid namespace of its own (the
 * process provider, which shares the host's) only the marked processes are killed.
 */
export class RunProcesses {
  readonly #ownPids: boolean;
  readonly #codeRuns = new Map<string, Run>();
  /** Processes the sandbox keeps across turns (MCP servers), and with them their children. */
  readonly #kept = new Set<number>();

  constructor(options: { ownPids: boolean }) {
    this.#ownPids = options.ownPids;
  }

  /** A process of the sandbox's own, whichever turn started it: no Stop kills it or its children. */
  keep(pid: number): void {
    this.#kept.add(pid);
  }

  release(pid: number): void {
    this.#kept.delete(pid);
  }

  /** A run begins now; its processes carry the runner's `marker` in their environment (`withRun`). */
  begin(kind: Run['kind'], marker: string): Run {
    const run: Run = { kind, marker, startTicks: bootTicks() };
    if (kind === 'code') this.#codeRuns.set(run.marker, run);
    return run;
  }

  end(run: Run): void {
    run.endTicks = bootTicks();
  }

  /** Kills every process the turn started (see the class); answers how many it killed. */
  killTurn(turn: Run): number {
    let killed = 0;
    for (let round = 0; round < maxSweeps; round++) {
      const victims = this.#turnProcesses(turn);
      if (victims.length === 0) break;
      for (const pid of victims) {
        try {
          process.kill(pid, 'SIGKILL');
          killed++;
        } catch {
          // Gone already, or not ours to signal.
        }
      }
    }
    return killed;
  }

  #turnProcesses(turn: Run): number[] {
    const processes = readProcesses();
    // The sandbox user's processes: the supervisor acts as that user (its effective uid).
    const uid = process.geteuid?.();
    const verdicts = new Map<number, boolean>();
    // Whether the process, or one of its ancestors, is outside the turn: older than it, or a code run's.
    const outside = (pid: number): boolean => {
      const known = verdicts.get(pid);
      if (known !== undefined) return known;
      const info = processes.get(pid);
      let verdict: boolean;
      if (!info || pid === 1 || pid === process.pid) verdict = false;
      else if (info.startTicks < turn.startTicks || this.#kept.has(pid) || this.#inCodeRun(info))
        verdict = true;
      else {
        verdicts.set(pid, false); // a cycle cannot happen in /proc, but a snapshot could race
        verdict = outside(info.ppid);
      }
      verdicts.set(pid, verdict);
      return verdict;
    };
    const victims: number[] = [];
    for (const info of processes.values()) {
      if (info.pid === 1 || info.pid === process.pid || info.uid !== uid) continue;
      if (markerOf(info.pid) === turn.marker) victims.push(info.pid);
      else if (this.#ownPids && info.startTicks >= turn.startTicks && !outside(info.pid))
        victims.push(info.pid);
    }
    return victims;
  }

  /**
   * A process marked with a code run that it started while that run ran, or just after: a job the
   * run's shell put in the background may fork (`setsid`, a double fork) after the shell exited. A
   * marker copied later does not count.
   */
  #inCodeRun(info: ProcessInfo): boolean {
    const marker = markerOf(info.pid);
    const run = marker === undefined ? undefined : this.#codeRuns.get(marker);
    if (!run) return false;
    return (
      info.startTicks >= run.startTicks &&
      (run.endTicks === undefined || info.startTicks <= run.endTicks + codeRunForkGraceTicks)
    );
  }
}

/** Clock ticks since boot, the unit of a process's start time in /proc/<pid>/stat (USER_HZ, 100 on Linux). */
export function bootTicks(): number {
  return Math.floor(Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]) * 100);
}

/** The live processes /proc shows (zombies left out: they are dead and hold nothing). */
function readProcesses(): Map<number, ProcessInfo> {
  const processes = new Map<number, ProcessInfo>();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // The command name may hold spaces and parentheses; the fields after its closing paren do not.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] === 'Z') continue;
      processes.set(pid, {
        pid,
        ppid: Number(fields[1]),
        startTicks: Number(fields[19]),
        uid: statSync(`/proc/${pid}`).uid,
      });
    } catch {
      // Exited while we looked.
    }
  }
  return processes;
}

function markerOf(pid: number): string | undefined {
  let environ: string;
  try {
    environ = readFileSync(`/proc/${pid}/environ`, 'utf8');
  } catch {
    return undefined;
  }
  const prefix = `${runIdVariable}=`;
  return environ
    .split('\0')
    .find((entry) => entry.startsWith(prefix))
    ?.slice(prefix.length);
}
