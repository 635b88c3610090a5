import { type ChildProcess, spawn } from 'node:child_process';
import type { Duplex } from 'node:stream';
import { bwrapIsolationArgs } from './bwrap-args.ts';

export interface BwrapLaunch {
  bwrapPath: string;
  setprivPath: string;
  /**
   * Running as root: the command drops to the sandbox's uid (and gid), which `start` names, so a
   * launcher can be spawned before anyone knows whose sandbox it will be.
   */
  privileged: boolean;
  /** A compiled seccomp filter (seccomp-filter.ts) bwrap applies before it execs the command. */
  seccomp?: Buffer;
  /** cgroup.procs files the process joins before it execs anything else. */
  cgroupProcs?: string[];
  /** What runs in the sandbox; it stays on argv, so it must hold no secrets. */
  command: string[];
  /**
   * The command is the supervisor, which drops to the sandbox uid itself (told it with `--uid`): it
   * starts as root in the sandbox with no capability but CAP_SETUID and CAP_SETGID, so that no
   * process of the sandbox's user can trace or signal it (see the supervisor's sandbox-user.ts).
   */
  supervisorDrops?: boolean;
}

/** A bwrap process blocked on reading its options; `start` hands them over and the sandbox comes up. */
export interface BwrapLauncher {
  readonly child: ChildProcess;
  /** Settles once the process is in its cgroups (at once without them); rejects if it died first. */
  readonly joined: Promise<void>;
  /** `uid` is the sandbox's; required when privileged. */
  start(options: string[], uid?: number): void;
}

// Joining the cgroups has to happen as root and before the sandbox exists, so every process in it
// is born inside the limits: the shell writes its own pid, reports back on the options socket (fd 3
// is a socket pair, so the byte travels the other way from the options), then execs into bwrap.
const joinCgroups =
  'for f; do [ "$f" = -- ] && break; echo $$ > "$f" || exit 125; shift; done; shift; printf j >&3; exec "$@"';

// The uid arrives with the options (`--setenv`, off argv), so the drop reads it inside the sandbox:
// the shell is the system's, run as root only to exec setpriv; nothing of the sandbox's own runs
// before the drop. No uid, a non-number or 0 (the options pipe cut short) and nothing runs.
const dropToSandboxUid =
  'u=$PADDOCK_SANDBOX_UID; unset PADDOCK_SANDBOX_UID; case $u in ""|*[!0-9]*) exit 126;; esac; ' +
  '[ "$u" -gt 0 ] || exit 126; s=$1; shift; ' +
  'exec "$s" --reuid="$u" --regid="$u" --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs -- "$@"';

// The same reading of the uid; the supervisor keeps root's real uid and the two capabilities it needs
// to start processes as the sandbox's user, and takes that user's effective uid as it starts.
const keepRootForSupervisor =
  'u=$PADDOCK_SANDBOX_UID; unset PADDOCK_SANDBOX_UID; case $u in ""|*[!0-9]*) exit 126;; esac; ' +
  '[ "$u" -gt 0 ] || exit 126; s=$1; shift; ' +
  'exec "$s" --bounding-set=-all,+setuid,+setgid --inh-caps=-all --no-new-privs -- "$@" --uid "$u"';

/**
 * Spawns bwrap as its own process group, through the cgroup join, and leaves it waiting for its
 * options. As root, the command starts through setpriv, which drops to the sandbox uid with no
 * capabilities and no way back (no_new_privs) before anything of the sandbox's own runs.
 */
export function spawnBwrap(launch: BwrapLaunch): BwrapLauncher {
  const { privileged } = launch;
  const argv: string[] = [];
  if (launch.cgroupProcs?.length)
    argv.push('/bin/sh', '-c', joinCgroups, 'paddock-cgroup', ...launch.cgroupProcs, '--');
  argv.push(launch.bwrapPath, ...bwrapIsolationArgs(privileged), '--args', '3');
  // On argv with the namespaces, and on a descriptor of its own written at once: a standby launcher
  // gets the same filter as any sandbox, before its options are known.
  if (launch.seccomp) argv.push('--seccomp', '4');
  argv.push('--');
  if (privileged) {
    const drop = launch.supervisorDrops ? keepRootForSupervisor : dropToSandboxUid;
    argv.push('/bin/sh', '-c', drop, 'paddock-drop', launch.setprivPath);
  }
  argv.push(...launch.command);
  const child = spawn(argv[0]!, argv.slice(1), {
    stdio: ['pipe', 'pipe', 'pipe', 'pipe', launch.seccomp ? 'pipe' : 'ignore'],
    detached: true,
    env: { PATH: '/usr/bin:/bin' },
  });
  const optionsPipe = child.stdio[3] as Duplex;
  optionsPipe.on('error', () => {});
  if (launch.seccomp) {
    const seccompPipe = child.stdio[4] as Duplex;
    seccompPipe.on('error', () => {});
    seccompPipe.end(launch.seccomp);
  }
  const joined = launch.cgroupProcs?.length ? whenJoined(child, optionsPipe) : Promise.resolve();
  joined.catch(() => {});
  return {
    child,
    joined,
    start(options, uid) {
      // NUL separates the options on the pipe; one inside a value would smuggle in extra options.
      if (options.some((option) => option.includes('\0'))) {
        throw new Error('sandbox options must not contain NUL');
      }
      if (privileged && !(Number.isInteger(uid) && (uid as number) > 0))
        throw new Error('a sandbox started as root needs the uid it runs as');
      // Last: bwrap applies --clearenv where it stands among the options.
      const all = privileged ? [...options, '--setenv', 'PADDOCK_SANDBOX_UID', String(uid)] : options;
      optionsPipe.end(all.map((option) => `${option}\0`).join(''));
    },
  };
}

/** Spawns bwrap and hands it its options at once. */
export function launchBwrap(launch: BwrapLaunch & { options: string[]; uid?: number }): ChildProcess {
  const launcher = spawnBwrap(launch);
  launcher.start(launch.options, launch.uid);
  return launcher.child;
}

const joinTimeoutMs = 10_000;

function whenJoined(child: ChildProcess, optionsPipe: Duplex): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error('sandbox launcher did not join its cgroups')),
      joinTimeoutMs,
    );
    timer.unref();
    optionsPipe.once('data', () => {
      clearTimeout(timer);
      resolve();
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`sandbox launcher exited with ${code} before joining its cgroups`));
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}
