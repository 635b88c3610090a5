import { assemble, type BpfInstruction } from './seccomp-bpf.ts';

/**
 * The system calls a sandbox is refused (EPERM), after Docker's default profile: those that need a
 * capability the sandbox never has anyway (kept so a user namespace cannot grant it), and those an
 * unprivileged process may make but that reach kernel surface no agent needs (keyrings, BPF, perf,
 * userfaultfd, io_uring, the LDT). x86_64 numbers (asm/unistd_64.h). ptrace, process_vm_readv/writev
 * and kcmp stay allowed: the kernel holds them to the caller's own uid in its own pid namespace, and
 * debuggers need them.
 */
const refusedX8664: Record<string, number> = {
  syslog: 103,
  uselib: 134,
  ustat: 136,
  sysfs: 139,
  vhangup: 153,
  modify_ldt: 154,
  pivot_root: 155,
  _sysctl: 156,
  acct: 163,
  settimeofday: 164,
  mount: 165,
  umount2: 166,
  swapon: 167,
  swapoff: 168,
  reboot: 169,
  iopl: 172,
  ioperm: 173,
  create_module: 174,
  init_module: 175,
  delete_module: 176,
  get_kernel_syms: 177,
  query_module: 178,
  quotactl: 179,
  nfsservctl: 180,
  lookup_dcookie: 212,
  clock_settime: 227,
  kexec_load: 246,
  add_key: 248,
  request_key: 249,
  keyctl: 250,
  perf_event_open: 298,
  name_to_handle_at: 303,
  open_by_handle_at: 304,
  clock_adjtime: 305,
  setns: 308,
  finit_module: 313,
  kexec_file_load: 320,
  bpf: 321,
  userfaultfd: 323,
  io_uring_setup: 425,
  io_uring_enter: 426,
  io_uring_register: 427,
  open_tree: 428,
  move_mount: 429,
  fsopen: 430,
  fsconfig: 431,
  fsmount: 432,
  fspick: 433,
  mount_setattr: 442,
  quotactl_fd: 443,
};

const nr = { clone: 56, unshare: 272, clone3: 435 };
const AUDIT_ARCH_X86_64 = 0xc000003e;
/** Set in the number of a system call made through the x32 ABI, whose numbers this table does not cover. */
const X32_SYSCALL_BIT = 0x40000000;
/** CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET. */
const CLONE_NEW_NAMESPACES = 0x7e020000;
/** unshare also takes CLONE_NEWTIME (0x80), which in clone's flags is part of the exit signal. */
const CLONE_NEWTIME = 0x80;

const RET_KILL_PROCESS = 0x80000000;
const RET_ALLOW = 0x7fff0000;
const retErrno = (errno: number) => 0x00050000 | errno;
const EPERM = 1;
const ENOSYS = 38;

/** `struct seccomp_data`: nr, arch, instruction pointer, then six 64-bit args (little-endian: low half first). */
const data = { nr: 0, arch: 4, arg0Low: 16 };

/** Which system calls the filter refuses, by name (for documentation and the capabilities string). */
export const refusedSyscalls = Object.keys(refusedX8664);

/**
 * The sandbox's seccomp filter as classic BPF, for `bwrap --seccomp`; undefined where Paddock has no
 * syscall table for the host's architecture (only x86_64 today). Beyond the refused list: no new
 * namespaces (clone and unshare with a CLONE_NEW* flag get EPERM; clone3, whose flags sit in memory a
 * filter cannot read, gets ENOSYS, so the C library falls back to clone), and any other
 * architecture's or ABI's system call kills the process.
 */
export function sandboxSeccompFilter(arch: string = process.arch): Buffer | undefined {
  if (arch !== 'x64') return undefined;
  const program: BpfInstruction[] = [
    { op: 'load', offset: data.arch },
    { op: 'jeq', k: AUDIT_ARCH_X86_64, onTrue: 'native', onFalse: 'kill' },
    { op: 'label', name: 'native' },
    { op: 'load', offset: data.nr },
    { op: 'jge', k: X32_SYSCALL_BIT, onTrue: 'kill' },
    ...Object.values(refusedX8664).map((k): BpfInstruction => ({ op: 'jeq', k, onTrue: 'eperm' })),
    { op: 'jeq', k: nr.clone, onTrue: 'clone' },
    { op: 'jeq', k: nr.unshare, onTrue: 'unshare' },
    { op: 'jeq', k: nr.clone3, onTrue: 'enosys' },
    { op: 'ret', k: RET_ALLOW },
    { op: 'label', name: 'clone' },
    { op: 'load', offset: data.arg0Low },
    { op: 'jset', k: CLONE_NEW_NAMESPACES, onTrue: 'eperm', onFalse: 'allow' },
    { op: 'label', name: 'unshare' },
    { op: 'load', offset: data.arg0Low },
    { op: 'jset', k: CLONE_NEW_NAMESPACES | CLONE_NEWTIME, onTrue: 'eperm', onFalse: 'allow' },
    { op: 'label', name: 'allow' },
    { op: 'ret', k: RET_ALLOW },
    { op: 'label', name: 'eperm' },
    { op: 'ret', k: retErrno(EPERM) },
    { op: 'label', name: 'enosys' },
    { op: 'ret', k: retErrno(ENOSYS) },
    { op: 'label', name: 'kill' },
    { op: 'ret', k: RET_KILL_PROCESS },
  ];
  return assemble(program);
}
