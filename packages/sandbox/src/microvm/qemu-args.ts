import { cpuModel, type MicroVmAccel } from './accel.ts';
import { type GuestShare, guestPorts } from './guest-init.ts';

export interface QemuArgsInput {
  accel: MicroVmAccel;
  memoryMiB: number;
  cpus: number;
  kernel: string;
  initramfs: string;
  shares: GuestShare[];
  /** Unix sockets the runner listens on; QEMU connects to them at start (control, API, egress ports). */
  controlSocket: string;
  apiSocket: string;
  /** The sandbox's egress proxy's connections (a third port). */
  egressSocket: string;
  /** Appended to the guest kernel's command line. */
  kernelArgs?: string[];
  /** Host uid (and gid) QEMU drops to once its devices are open; set when the server runs as root. */
  runAs?: number;
}

/**
 * The `microvm` machine (no PCI, no firmware tables beyond ACPI, virtio over MMIO) with only what a
 * sandbox needs: 9p shares, one virtio-serial device with the control, API and egress ports, the serial
 * console on stdout for diagnostics. No network device at all. QEMU runs under its seccomp filter.
 */
export function qemuArgs(input: QemuArgsInput): string[] {
  const args = [
    ...['-machine', `microvm,accel=${input.accel}`, '-cpu', cpuModel(input.accel)],
    ...['-smp', String(input.cpus), '-m', `${input.memoryMiB}M`],
    ...['-nodefaults', '-no-user-config', '-display', 'none', '-no-reboot'],
    ...['-kernel', input.kernel, '-initrd', input.initramfs],
    ...[
      '-append',
      ['console=ttyS0 quiet loglevel=3 panic=-1 reboot=t', ...(input.kernelArgs ?? [])].join(' '),
    ],
    ...['-serial', 'stdio'],
  ];
  input.shares.forEach((share, i) => {
    const readOnly = share.readOnly ? ',readonly=on' : '';
    args.push(
      '-fsdev',
      `local,id=fs${i},path=${escapeOption(share.hostPath)},security_model=none${readOnly}`,
    );
    args.push('-device', `virtio-9p-device,fsdev=fs${i},mount_tag=${share.tag}`);
  });
  args.push('-device', 'virtio-serial-device');
  for (const [id, socket] of [
    ['control', input.controlSocket],
    ['api', input.apiSocket],
    ['egress', input.egressSocket],
  ] as const) {
    args.push('-chardev', `socket,id=${id},path=${escapeOption(socket)}`);
    args.push('-device', `virtserialport,chardev=${id},name=${guestPorts[id]}`);
  }
  if (input.runAs !== undefined) args.push('-runas', `${input.runAs}:${input.runAs}`);
  args.push('-sandbox', 'on,obsolete=deny,spawn=deny,resourcecontrol=deny');
  return args;
}

/** QEMU's option syntax doubles a comma inside a value. */
function escapeOption(value: string): string {
  return value.replaceAll(',', ',,');
}
