import type { HarnessName, MachineKind } from '@paddock/protocol';
import { PaddockError } from '../errors.ts';

/** Providers that run only the seven coding harnesses (spec: "Sandbox providers", rule 1). */
const codingOnly: ReadonlySet<MachineKind> = new Set(['sandbox_c', 'sandbox_d', 'sandbox_e', 'sandbox_f']);

export interface ProviderPolicy {
  /** Throws the D4 error when an agent on this provider may not be created. */
  check(machineKind: MachineKind, harness: HarnessName): void;
}

/** Which providers this deployment offers. Until more providers exist, `sandbox_a` alone is on. */
export function createProviderPolicy(enabled: ReadonlySet<MachineKind>): ProviderPolicy {
  return {
    check(machineKind, harness) {
      if (codingOnly.has(machineKind) && !harness.startsWith('coding_')) {
        throw new PaddockError(
          'runtime_not_supported',
          `${machineKind} runs coding agents only, not ${harness}`,
        );
      }
      if (!enabled.has(machineKind)) {
        throw new PaddockError('provider_disabled', `${machineKind} is not enabled in this deployment`);
      }
    },
  };
}
