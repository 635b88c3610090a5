import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuModel, type MicroVmAccel } from './accel.ts';
import { probeExitPort, probeExitStatus, probeGuestImage } from './probe-guest.ts';

export type AccelProbeResult = { ok: true; ms: number } | { ok: false; reason: string; ms: number };

export interface AccelProbeOptions {
  qemuPath: string;
  accel: MicroVmAccel;
  /** A guest that has not finished by then does not run at a usable speed. Default 1.5 s. */
  timeoutMs?: number;
}

const stderrLimit = 4000;
const reasonLimit = 400;

/**
 * Whether QEMU can run a guest with this accelerator: it boots the probe guest (see probe-guest.ts)
 * on the `microvm` machine with the same CPU model the sandboxes get and waits for its exit status.
 * Files under /dev/kvm prove nothing: on a host that is itself a VM, KVM may refuse the CPU model
 * or emulate each instruction. A failure's reason quotes QEMU.
 */
export async function probeAccel(options: AccelProbeOptions): Promise<AccelProbeResult> {
  const timeoutMs = options.timeoutMs ?? 1_500;
  const dir = await mkdtemp(join(tmpdir(), 'paddock-accel-probe-'));
  const image = join(dir, 'guest.bin');
  const started = performance.now();
  try {
    await writeFile(image, probeGuestImage());
    const args = [
      ...['-machine', `microvm,accel=${options.accel}`, '-cpu', cpuModel(options.accel)],
      ...['-nodefaults', '-no-user-config', '-display', 'none', '-no-reboot', '-m', '16'],
      ...['-bios', image, '-device', `isa-debug-exit,iobase=${probeExitPort},iosize=4`],
    ];
    const exit = await run(options.qemuPath, args, timeoutMs);
    const ms = Math.round(performance.now() - started);
    if (exit.code === probeExitStatus) return { ok: true, ms };
    return { ok: false, ms, reason: explain(options, exit, timeoutMs) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

interface ProbeExit {
  code: number | null;
  signal: string | null;
  stderr: string;
  timedOut: boolean;
  spawnError?: NodeJS.ErrnoException;
}

function run(command: string, args: string[], timeoutMs: number): Promise<ProbeExit> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    let timedOut = false;
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (text: string) => {
      stderr = (stderr + text).slice(0, stderrLimit);
    });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.once('error', (spawnError: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({ code: null, signal: null, stderr, timedOut, spawnError });
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stderr, timedOut });
    });
  });
}

function explain(options: AccelProbeOptions, exit: ProbeExit, timeoutMs: number): string {
  const what = options.accel === 'kvm' ? 'KVM cannot run guests on this host' : 'QEMU cannot run guests';
  if (exit.spawnError?.code === 'ENOENT') return `${options.qemuPath} is not installed`;
  if (exit.spawnError) return `${what}: ${options.qemuPath} did not start (${exit.spawnError.message})`;
  if (exit.timedOut) {
    return (
      `${what}: a 64-bit test guest of about five million instructions did not finish within ` +
      `${timeoutMs} ms (a few ms with hardware virtualization): its instructions are emulated`
    );
  }
  // QEMU prefixes each line with its program name; the lines themselves say what went wrong.
  const said = exit.stderr
    .split('\n')
    .map((line) => line.replace(/^[^:\s]*qemu-system-[^:]*:\s*/, '').trim())
    .filter((line) => line && !line.startsWith('warning:'))
    .join('; ');
  const how = exit.signal ? `killed by ${exit.signal}` : `exit status ${exit.code}`;
  return `${what}: ${said || `the test guest did not finish (QEMU ${how})`}`.slice(0, reasonLimit);
}
