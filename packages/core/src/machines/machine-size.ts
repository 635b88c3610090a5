import { type MachineKind, type MachineSize, providerFacts } from '@paddock/protocol';

/**
 * The size a thread's sandbox boots at: the agent's `machine_size` where its provider offers it, else
 * the provider's largest (the providers that offer only L, like `sandbox_b`, run every sandbox at L,
 * whatever the agent's default S says).
 */
export function bootSize(kind: MachineKind, requested: MachineSize): MachineSize {
  const offered = providerFacts[kind].sizes;
  return offered.includes(requested) ? requested : offered[offered.length - 1]!;
}
