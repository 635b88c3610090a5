import { access, constants, readFile } from 'node:fs/promises';
import { defaultQemuPath, type MicroVmAccel } from './accel.ts';
import { probeAccel } from './accel-probe.ts';
import { findGuestKernel, type GuestKernel } from './guest-kernel.ts';

export interface MicroVmHostOptions {
  accel: MicroVmAccel;
  qemuPath?: string;
  /** A statically linked busybox: the guest's init, before the host's /usr is mounted. */
  busyboxPath?: string;
  probeTimeoutMs?: number;
}

export type MicroVmHost =
  | {
      available: true;
      accel: MicroVmAccel;
      qemuPath: string;
      busyboxPath: string;
      kernel: GuestKernel;
      probeMs: number;
    }
  | { available: false; reason: string };

export const defaultBusyboxPath = '/usr/bin/busybox';

/**
 * Whether this host can run `sandbox_f` micro-VMs, in the order an operator would fix it: QEMU, then
 * (for KVM) /dev/kvm, then a real guest run (the accelerator probe), then what the guest boots.
 */
export async function checkMicroVmHost(options: MicroVmHostOptions): Promise<MicroVmHost> {
  const qemuPath = options.qemuPath ?? defaultQemuPath;
  const busyboxPath = options.busyboxPath ?? defaultBusyboxPath;
  if (!(await hasAccess(qemuPath, constants.X_OK)))
    return { available: false, reason: `${qemuPath} is not installed (Debian: qemu-system-x86)` };
  if (options.accel === 'kvm') {
    if (!(await hasAccess('/dev/kvm', constants.F_OK)))
      return { available: false, reason: 'no /dev/kvm: this host has no KVM' };
    if (!(await hasAccess('/dev/kvm', constants.R_OK | constants.W_OK)))
      return { available: false, reason: '/dev/kvm is not readable and writable by the server' };
  }
  const probe = await probeAccel({ qemuPath, accel: options.accel, timeoutMs: options.probeTimeoutMs });
  if (!probe.ok) return { available: false, reason: probe.reason };
  const kernel = await findGuestKernel();
  if (!kernel)
    return {
      available: false,
      reason:
        'no guest kernel: /boot has no vmlinuz whose modules include virtio_mmio, virtio_console and 9p (Debian: linux-image-amd64)',
    };
  if (!(await isStatic(busyboxPath)))
    return {
      available: false,
      reason: `${busyboxPath} is missing or not statically linked (Debian: busybox-static)`,
    };
  return { available: true, accel: options.accel, qemuPath, busyboxPath, kernel, probeMs: probe.ms };
}

/** A dynamically linked ELF names its loader (`/lib64/ld-linux-x86-64.so.2`) near its start. */
async function isStatic(path: string): Promise<boolean> {
  const head = await readFile(path)
    .then((data) => data.subarray(0, 4096))
    .catch(() => undefined);
  return (
    head !== undefined && head.subarray(0, 4).toString('latin1') === '\x7fELF' && !head.includes('ld-linux')
  );
}

async function hasAccess(path: string, mode: number): Promise<boolean> {
  return access(path, mode).then(
    () => true,
    () => false,
  );
}
