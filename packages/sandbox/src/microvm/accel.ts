import { readFileSync } from 'node:fs';

/**
 * How QEMU runs the guest's CPU: `kvm` is hardware virtualization (production); `tcg` is QEMU's
 * software emulation, far too slow for agents and only for tests on hosts whose KVM cannot run guests.
 */
export type MicroVmAccel = 'kvm' | 'tcg';

/** The guest CPU: the host's own under KVM; under TCG the richest model QEMU emulates. */
export function cpuModel(accel: MicroVmAccel): string {
  return accel === 'kvm' ? 'host' : 'max';
}

/**
 * Guest kernel arguments the accelerator needs. Under TCG the guest's TSC is the host's, and the
 * kernel's calibration of it against the emulated PIT fails on a busy host (then the boot stalls
 * with no clocksource): it is given the host's frequency instead. KVM guests use kvm-clock.
 */
export function accelKernelArgs(accel: MicroVmAccel): string[] {
  if (accel !== 'tcg') return [];
  const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
  const mhz = /^cpu MHz\s*:\s*([\d.]+)/m.exec(cpuinfo)?.[1];
  return mhz ? [`tsc_early_khz=${Math.round(Number(mhz) * 1000)}`] : [];
}

export const defaultQemuPath = '/usr/bin/qemu-system-x86_64';
