/**
 * The probe's guest: a 64 KiB firmware image (QEMU maps `-bios` just below 4 GiB and the CPU starts
 * at its last 16 bytes in real mode). It does what any Linux guest does first — protected mode, page
 * tables, long mode — then 700 passes storing one quadword into each 4 KiB page of 1–8 MiB (about
 * five million instructions) and writes 0x2a to the isa-debug-exit port at 0xf4, which ends QEMU with
 * status (0x2a << 1) | 1 = 85. Hardware virtualization runs it in a few milliseconds, QEMU's software
 * emulation (TCG) in about 150 ms; a KVM that emulates guest instructions one by one (as on a host
 * that is itself a guest without nested virtualization) takes seconds, and the probe's deadline
 * turns that into a no.
 *
 * Assembled from this source (GNU as, `gcc -c -x assembler-with-cpp`, `objcopy -O binary`):
 *
 *       .code16                       | start16: cli; lgdtl %cs:gdtr
 *       mov %cr0,%eax; or $1,%eax; mov %eax,%cr0; ljmpl $0x08,$start32
 *       .code32                       | start32: ds=es=ss=0x10; zero 0x1000..0x5000
 *       PML4[0]@0x1000 -> 0x2000; PDPT[0] -> PD@0x3000; PDPT[3] -> PD@0x4000
 *       PD@0x3000[0..3] = 2 MiB pages 0..8 MiB; PD@0x4000[511] = 0xFFE00000 (this image)
 *       CR4.PAE; CR3=0x1000; EFER.LME (wrmsr 0xC0000080); CR0.PG; ljmpl $0x18,$start64
 *       .code64                       | start64: mov $700,%r8
 *    1: mov $0x100000,%rdi
 *    2: mov %rdi,(%rdi); add $0x1000,%rdi; cmp $0x800000,%rdi; jb 2b; dec %r8; jnz 1b
 *       mov $0x2a,%al; out %al,$0xf4; 3: hlt; jmp 3b
 *       gdt: null, 32-bit code 0x00CF9B000000FFFF, data 0x00CF93000000FFFF, 64-bit code 0x00AF9B000000FFFF
 *       .org 0xFFF0: jmp start16 (wraps to offset 0)
 */
const code =
  'fa2e660f011600010f20c06683c8010f22c066ea1a00ffff080066b810008ed88ec08ed0bf0010000031c0b9001000' +
  '00f3abc7050010000003200000c7050020000003300000c7051820000003400000c7050030000083000000c705083000' +
  '0083002000c7051030000083004000c7051830000083006000c705f84f00008300e0ff0f20e083c8200f22e0b8001000' +
  '000f22d8b9800000c00f320d000100000f300f20c00d000000800f22c0eab300ffff180049c7c0bc02000048c7c70000' +
  '100048893f4881c7001000004881ff0000800072ed49ffc875e1b02ae6f4f4ebfd0000000000000000ffff0000009bcf' +
  '00ffff00000093cf00ffff0000009baf001f00e000ffff';
const resetVector = 'e90d00';

/** The isa-debug-exit port the guest writes to, and the status QEMU then exits with. */
export const probeExitPort = 0xf4;
export const probeExitStatus = (0x2a << 1) | 1;

export function probeGuestImage(): Buffer {
  const image = Buffer.alloc(0x10000);
  Buffer.from(code, 'hex').copy(image, 0);
  Buffer.from(resetVector, 'hex').copy(image, 0xfff0);
  return image;
}
