import type { ProviderAvailability } from '@paddock/core';
import type { MachineKind } from '@paddock/protocol';

/**
 * Which providers this host can run, and why not. `sandbox_a` is the local provider with the
 * isolation the runner found (bubblewrap, else plain processes, or the detached runners'), and
 * shared folders where it can mount them (bubblewrap as root). `sandbox_b` is what the Docker
 * engine's probe found (see docker.ts).
 */
export function providerAvailability(
  localIsolation: string,
  sharedFolders: boolean,
  docker: ProviderAvailability,
  /** sandbox_f's, from the start-up check (see micro-vm-check.ts). */
  microVm: ProviderAvailability,
): Record<MachineKind, ProviderAvailability> {
  return {
    sandbox_a: { available: true, isolation: localIsolation, sharedFolders },
    sandbox_b: docker,
    // The local provider's sandboxes, which sleep while idle (c) or end after a lifetime (d).
    sandbox_c: { available: true, isolation: localIsolation, sharedFolders },
    sandbox_d: { available: true, isolation: localIsolation },
    // Sandboxes on runners users start on their own machines, each with its agent's token.
    sandbox_e: { available: true, isolation: 'self-hosted runners' },
    // QEMU micro-VMs, where the start-up probe saw a guest run (see micro-vm-check.ts).
    sandbox_f: microVm,
  };
}
