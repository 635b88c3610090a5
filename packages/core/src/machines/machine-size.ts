import { type MachineKind, type MachineSize, providerFacts } from '@paddock/protocol';
import { PaddockError } from '../errors.ts';

/** Refuses a size the provider does not offer (spec provider table: `sandbox_b`, d, e and f offer L). */
export function requireOfferedSize(kind: MachineKind, size: MachineSize): void {
  const offered = providerFacts[kind].sizes;
  if (!offered.includes(size))
    throw new PaddockError('size_not_offered', `${kind} offers size ${offered.join(', ')}, not ${size}`);
}

/**
 * The size a thread's sandbox boots at: the agent's `machine_size` where its provider offers it, else
 * the provider's largest (an agent stored before sizes were checked may say S on an L-only provider).
 */
export function bootSize(kind: MachineKind, requested: MachineSize): MachineSize {
  const offered = providerFacts[kind].sizes;
  return offered.includes(requested) ? requested : offered[offered.length - 1]!;
}
