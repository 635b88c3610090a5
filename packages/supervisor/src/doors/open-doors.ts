import type { SupervisorFlags } from '../flags.ts';

/**
 * The sandbox's loopback doors: the Paddock API on port 8787 and the egress proxy on 8788, joined to
 * the runner's sockets the provider binds in (bwrap, Docker), or carried over virtio-serial ports (a
 * micro-VM). Open before the supervisor says it is ready, so the first process it starts finds them.
 */
export async function openDoors(flags: SupervisorFlags): Promise<void> {
  const opened: Promise<unknown>[] = [];
  if (flags.apiSocket) {
    const { startLoopbackProxy } = await import('./loopback-proxy.ts');
    opened.push(startLoopbackProxy(flags.apiSocket));
  } else if (flags.apiPort) {
    const { startPortProxy } = await import('./port-proxy.ts');
    opened.push(startPortProxy(flags.apiPort));
  }
  if (flags.egressSocket) {
    const { socketUpstream, startEgressPort } = await import('./egress-port.ts');
    opened.push(startEgressPort(socketUpstream(flags.egressSocket)));
  } else if (flags.egressPort) {
    const [{ startEgressPort }, { openPortStreams }] = await Promise.all([
      import('./egress-port.ts'),
      import('./port-proxy.ts'),
    ]);
    const port = openPortStreams(flags.egressPort);
    opened.push(startEgressPort((client, head) => port.open(client, head)));
  }
  await Promise.all(opened);
}
