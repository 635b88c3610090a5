import type { ProviderAvailability, SandboxHost } from '@paddock/core';
import type { MachineKind } from '@paddock/protocol';

/**
 * One way this deployment hosts sandboxes (the in-process runner, the detached runners, Docker,
 * micro-VMs, the self-hosted runners): the providers whose threads it hosts, its host behind core's
 * seam, whether those providers can run here now (read on every capabilities call and agent create),
 * and its end with the server. Start-up composes the list into the routed host core sees
 * (`startup/sandbox-backends.ts`); each is built by its own module here.
 */
export interface SandboxBackend {
  readonly kinds: readonly MachineKind[];
  readonly host: SandboxHost;
  availability(): ProviderAvailability;
  shutdown(): Promise<void>;
}

/**
 * The local provider's kinds, hosted by the deployment's own runner (in this process, or its detached
 * runners): sandbox_a, and the same sandboxes sleeping while idle (c) or ending after a lifetime (d).
 */
export const localKinds = ['sandbox_a', 'sandbox_c', 'sandbox_d'] as const satisfies readonly MachineKind[];
