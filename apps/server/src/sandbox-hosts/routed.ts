import {
  type AdoptingSandboxHost,
  isAdoptingHost,
  type SandboxHost,
  type SandboxPlacement,
} from '@paddock/core';
import type { MachineKind, SandboxExec, SandboxExecResult } from '@paddock/protocol';

/**
 * The deployment's sandboxes as core sees them: each thread goes to the host of the backend whose
 * kinds name its provider (`sandbox_e`: the self-hosted runners its users connected; `sandbox_b`: the
 * Docker engine; `sandbox_f`: the micro-VM host), a thread not placed yet to the deployment's own host
 * (sandbox_a's: the in-process runner, or its detached runners). Core places each thread (`place`)
 * before any other call for it; the choice is remembered per thread. It adopts turns when one of
 * its hosts does, on that host's threads.
 */
export function routedSandboxHost(
  backends: readonly { kinds: readonly MachineKind[]; host: SandboxHost }[],
): SandboxHost {
  const byKind: Partial<Record<MachineKind, SandboxHost>> = Object.fromEntries(
    backends.flatMap(({ kinds, host }) => kinds.map((kind) => [kind, host])),
  );
  const own = byKind.sandbox_a!;
  const placed = new Map<string, SandboxHost>();
  const hostOf = (threadId: string): SandboxHost => placed.get(threadId) ?? own;
  // One host may serve several kinds: each counts once.
  const hosts = [...new Set(backends.map((backend) => backend.host))];
  const routed: SandboxHost = {
    adoptsTurns: false,
    place(threadId: string, placement: SandboxPlacement) {
      const host = byKind[placement.machineKind];
      if (host) placed.set(threadId, host);
      else placed.delete(threadId);
      hostOf(threadId).place(threadId, placement);
    },
    runnerFor: (threadId) => hostOf(threadId).runnerFor(threadId),
    isRunning: (threadId) => hostOf(threadId).isRunning(threadId),
    isBooting: (threadId) => hostOf(threadId).isBooting(threadId),
    liveThreadIds: () => hosts.flatMap((host) => host.liveThreadIds()),
    canInterrupt: (threadId) => hostOf(threadId).canInterrupt(threadId),
    ensure: (threadId, options) => hostOf(threadId).ensure(threadId, options),
    runTurn: (threadId, command, onEvent) => hostOf(threadId).runTurn(threadId, command, onEvent),
    interrupt: (threadId, turnId) => hostOf(threadId).interrupt(threadId, turnId),
    steer: (threadId, turnId, messages) => hostOf(threadId).steer(threadId, turnId, messages),
    exec: <E extends SandboxExec>(threadId: string, request: E): Promise<SandboxExecResult<E>> =>
      hostOf(threadId).exec(threadId, request),
  };
  const adopting = hosts.filter(isAdoptingHost);
  if (adopting.length === 0) return routed;
  const adoptingRouted: AdoptingSandboxHost = {
    ...routed,
    adoptsTurns: true,
    connectedRunners: () => adopting.flatMap((host) => host.connectedRunners()),
    attach(threadId, turnId, fromIndex, onEvent) {
      const host = hostOf(threadId);
      if (!isAdoptingHost(host)) throw new Error('this sandbox host cannot adopt turns');
      return host.attach(threadId, turnId, fromIndex, onEvent);
    },
    release(turnId) {
      // Turn ids are unique: a host that does not know the turn ignores it.
      for (const host of adopting) host.release(turnId);
    },
    interruptOrphan(threadId) {
      // A host whose turns die with the server leaves none behind.
      const host = hostOf(threadId);
      if (isAdoptingHost(host)) host.interruptOrphan(threadId);
    },
  };
  return adoptingRouted;
}
