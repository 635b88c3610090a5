import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { gzipSync } from 'node:zlib';
import { type CpioEntry, cpioArchive } from './cpio.ts';
import { type GuestInitInput, guestInitScript } from './guest-init.ts';

export interface InitramfsInput extends Omit<GuestInitInput, 'modules'> {
  /** A statically linked busybox: /init's shell and tools. */
  busyboxPath: string;
  /** Host paths of the kernel modules, in load order. */
  modules: string[];
}

/** The guest's initramfs, built from local files only: busybox, the host kernel's modules and /init. */
export async function buildInitramfs(input: InitramfsInput): Promise<Buffer> {
  const entries: CpioEntry[] = ['bin', 'lib', 'lib/modules', 'proc', 'sys', 'dev', 'newroot'].map((path) => ({
    path,
    type: 'dir',
  }));
  entries.push({ path: 'bin/busybox', type: 'file', data: await readFile(input.busyboxPath), mode: 0o755 });
  for (const module of input.modules) {
    entries.push({ path: `lib/modules/${basename(module)}`, type: 'file', data: await readFile(module) });
  }
  const script = guestInitScript({ ...input, modules: input.modules.map((module) => basename(module)) });
  entries.push({ path: 'init', type: 'file', data: Buffer.from(script), mode: 0o755 });
  return gzipSync(cpioArchive(entries), { level: 1 });
}
