/** What the supervisor is told on its command line: fixed paths and the sandbox's uid, never anything of a thread. */
export interface SupervisorFlags {
  /**
   * The uid (and gid) of the sandbox's user. Given, the supervisor runs as root in the sandbox with
   * only the capabilities to change user: it acts on files as this user and starts every process as
   * it, and no process of that user can trace or signal it.
   */
  uid: number | undefined;
  /** The runner's API proxy socket inside the sandbox; served on loopback port 8787. */
  apiSocket: string | undefined;
  /** The sandbox's egress proxy socket; served on loopback port 8788. */
  egressSocket: string | undefined;
  /** In a micro-VM: the virtio-serial port that carries the API's connections. */
  apiPort: string | undefined;
  /** In a micro-VM: the virtio-serial port that carries the egress proxy's connections. */
  egressPort: string | undefined;
  /**
   * The sandbox is alone in a pid namespace of its own (bwrap, Docker, micro-VM): every process
   * /proc shows is the sandbox's, so a Stop may judge them all, not only those marked with its run.
   */
  ownPids: boolean;
  /**
   * No pipe holds the link (a pod, with no runner beside it): the supervisor dials this WebSocket URL
   * out to Paddock and carries its frames there (`dial-out.ts`).
   */
  connect: string | undefined;
  /** With `connect`: the file holding the token that proves which sandbox dials in (read as root). */
  tokenFile: string | undefined;
}

/** A few lines rather than util.parseArgs: every module loaded counts against boot time and memory. */
export function parseFlags(argv: string[]): SupervisorFlags {
  const flagValue = (name: string): string | undefined => {
    const at = argv.indexOf(name);
    return at === -1 ? undefined : argv[at + 1];
  };
  const uid = flagValue('--uid');
  if (uid !== undefined && !/^[1-9]\d{0,9}$/.test(uid)) throw new Error(`--uid: not a uid: ${uid}`);
  const connect = flagValue('--connect');
  if (connect !== undefined && !/^wss?:\/\//.test(connect))
    throw new Error(`--connect: not a WebSocket URL: ${connect}`);
  const tokenFile = flagValue('--token-file');
  if ((connect === undefined) !== (tokenFile === undefined))
    throw new Error('--connect and --token-file go together');
  return {
    uid: uid === undefined ? undefined : Number(uid),
    apiSocket: flagValue('--api-socket'),
    egressSocket: flagValue('--egress-socket'),
    apiPort: flagValue('--api-port'),
    egressPort: flagValue('--egress-port'),
    ownPids: argv.includes('--own-pids'),
    connect,
    tokenFile,
  };
}
