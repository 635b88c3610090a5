/**
 * Who the supervisor acts as. Started as root in the sandbox with no capability but CAP_SETUID and
 * CAP_SETGID (the provider's launch), it takes the sandbox user's effective uid and gid at once and
 * keeps them: its file operations are that user's, and it signals that user's processes as their
 * own. It is root again only inside `asRoot`, synchronously, to start a process as the user. Its
 * real and saved uid stay 0, so no process of the user can signal or trace it, and having changed
 * its effective uid it is not dumpable, so its /proc files are root's.
 */
export interface SandboxUser {
  /** The uid and gid processes start as; undefined where the supervisor is the sandbox's user itself. */
  readonly uid: number | undefined;
  /** Runs `start` as root: it must be synchronous (a spawn's fork happens inside the call). */
  asRoot<T>(start: () => T): T;
}

export function becomeSandboxUser(uid: number | undefined): SandboxUser {
  if (uid === undefined) return { uid, asRoot: (start) => start() };
  process.setgroups!([]);
  process.setegid!(uid);
  process.seteuid!(uid);
  return {
    uid,
    asRoot(start) {
      process.seteuid!(0);
      process.setegid!(0);
      try {
        return start();
      } finally {
        process.setegid!(uid);
        process.seteuid!(uid);
      }
    },
  };
}
