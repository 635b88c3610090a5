import type { ProviderAvailability } from '@paddock/core';
import { checkMicroVmHost, type MicroVmAccel, type MicroVmHost } from '@paddock/sandbox';
import type { Logger } from 'pino';

export interface MicroVmCheck {
  /** What capabilities and agent create read: the probe's verdict, or `probing` until it is in. */
  availability(): ProviderAvailability;
  /** The host's micro-VM setup once the check found one that works. */
  host(): Extract<MicroVmHost, { available: true }> | undefined;
  /** Settles when the check is done (it never rejects). */
  readonly settled: Promise<void>;
}

export const probingReason = 'still probing whether this host can run micro-VM guests';

/**
 * Starts the sandbox_f check (QEMU, /dev/kvm, a real guest run, kernel) in the background at start-up
 * and keeps its verdict; start-up does not wait for it, and until it is in, sandbox_f is unavailable
 * with the reason `probing` (it takes about a tenth of a second, more under TCG).
 */
export function startMicroVmCheck(
  accel: MicroVmAccel,
  logger: Logger,
  /** Whether the deployment config switches sandbox_f on: only then does its verdict go above debug. */
  enabled: boolean,
): MicroVmCheck {
  let result: MicroVmHost | undefined;
  const settled = checkMicroVmHost({ accel })
    .catch(
      (error: unknown): MicroVmHost => ({ available: false, reason: `the check failed: ${String(error)}` }),
    )
    .then((host) => {
      result = host;
      if (host.available)
        logger[enabled ? 'info' : 'debug'](
          { accel, kernel: host.kernel.version, probeMs: host.probeMs },
          'sandbox_f: micro-VMs available',
        );
      else
        logger[enabled ? 'warn' : 'debug'](
          { accel, reason: host.reason },
          'sandbox_f: micro-VMs unavailable',
        );
    });
  return {
    availability() {
      if (!result) return { available: false, reason: probingReason };
      if (!result.available) return { available: false, reason: result.reason };
      return { available: true, isolation: `micro-VMs (QEMU microvm, ${accel === 'kvm' ? 'KVM' : 'TCG'})` };
    },
    host: () => (result?.available ? result : undefined),
    settled,
  };
}
