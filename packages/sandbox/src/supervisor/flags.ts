/** What the supervisor is told on its command line: fixed paths only, never anything of a thread. */
export interface SupervisorFlags {
  /** The provider's warm-up run that fills the read-only compile cache sandboxes boot from. */
  warm: boolean;
  /** Where the workspace is as the sandbox sees it, when that is fixed (/workspace under bwrap). */
  workspace: string | undefined;
  /** The host's API proxy socket inside the sandbox; the supervisor serves it on loopback. */
  proxySocket: string | undefined;
  /** The runner's egress proxy socket inside the sandbox; the supervisor serves it on loopback port 8788. */
  egressSocket: string | undefined;
  /** In a micro-VM: the virtio-serial port that carries the egress proxy's connections. */
  egressPort: string | undefined;
  /** In a micro-VM: the virtio-serial port that carries the API; the supervisor serves it on loopback. */
  apiPort: string | undefined;
  /**
   * The sandbox is alone in a pid namespace of its own (bwrap, Docker): every process /proc shows
   * is the sandbox's, so a Stop may judge them all, not only those marked with the stopped turn.
   */
  ownPids: boolean;
}

/** A few lines rather than util.parseArgs: every module loaded before `ready` counts against boot time. */
export function parseFlags(argv: string[]): SupervisorFlags {
  const flagValue = (name: string): string | undefined => {
    const at = argv.indexOf(name);
    return at === -1 ? undefined : argv[at + 1];
  };
  return {
    warm: argv.includes('--warm'),
    workspace: flagValue('--workspace'),
    proxySocket: flagValue('--proxy-socket'),
    egressSocket: flagValue('--egress-socket'),
    apiPort: flagValue('--api-port'),
    egressPort: flagValue('--egress-port'),
    ownPids: argv.includes('--own-pids'),
  };
}
