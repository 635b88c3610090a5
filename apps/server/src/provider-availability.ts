import { accessSync, constants, existsSync } from 'node:fs';
import type { ProviderAvailability } from '@paddock/core';
import type { MachineKind } from '@paddock/protocol';

const notYet = (what: string): ProviderAvailability => ({
  available: false,
  reason: `${what} is not part of this version of Paddock yet`,
});

/**
 * Which providers this host can run, and why not. `sandbox_a` is the local provider with the
 * isolation the runner found (bubblewrap, else plain processes, or the detached runners'), and
 * shared folders where it can mount them (bubblewrap as root). `sandbox_b` is what the Docker
 * engine's probe found (see docker-sandboxes.ts).
 */
export function providerAvailability(
  localIsolation: string,
  sharedFolders: boolean,
  docker: ProviderAvailability,
): Record<MachineKind, ProviderAvailability> {
  return {
    sandbox_a: { available: true, isolation: localIsolation, sharedFolders },
    sandbox_b: docker,
    // The local provider's sandboxes, which sleep while idle (c) or end after a lifetime (d).
    sandbox_c: { available: true, isolation: localIsolation, sharedFolders },
    sandbox_d: { available: true, isolation: localIsolation },
    // Sandboxes on runners users start on their own machines, each with its agent's token.
    sandbox_e: { available: true, isolation: 'self-hosted runners' },
    sandbox_f: microVmAvailability(),
  };
}

/** sandbox_f needs KVM guests and QEMU before anything else. */
function microVmAvailability(): ProviderAvailability {
  if (!existsSync('/dev/kvm'))
    return { available: false, reason: 'no /dev/kvm: this host cannot run KVM guests' };
  try {
    accessSync('/dev/kvm', constants.R_OK | constants.W_OK);
  } catch {
    return { available: false, reason: '/dev/kvm is not accessible to the server' };
  }
  const qemu = ['/usr/bin/qemu-system-x86_64', '/usr/local/bin/qemu-system-x86_64'].some((p) =>
    existsSync(p),
  );
  if (!qemu) return { available: false, reason: 'qemu-system-x86_64 is not installed' };
  return notYet('the micro-VM provider');
}
