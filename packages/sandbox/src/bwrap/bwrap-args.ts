import type { CodeDir } from '../code-paths.ts';
import type { SkillMount } from '../provider.ts';
import { sandboxPaths, skillPath } from '../sandbox-paths.ts';

export interface BwrapArgsInput {
  /** The supervisor's own environment; the thread's arrives later over stdin (`configure`). */
  env: Record<string, string>;
  workspaceDir: string;
  /** The staged /etc (see sandbox-etc.ts). */
  etcDir: string;
  /** Directories bound read-only (the supervisor and Node under /opt/paddock; see code-paths.ts). */
  code: CodeDir[];
  /** Host path of the API proxy socket, bound at /run/paddock/api.sock. */
  apiSocket?: string;
  /** Host path of the sandbox's egress proxy socket, bound at /run/paddock/egress.sock. */
  egressSocket?: string;
  /** Host mount point bound at /shared (see shared-mount.ts). */
  sharedDir?: string;
  /** Skill folders bound read-only at /skills/<slug>. */
  skills?: SkillMount[];
}

/**
 * The namespaces and lifetime flags, which go on bwrap's argv: should the options pipe ever be cut
 * short, bwrap still isolates whatever it gets to run. As root, bwrap runs without a user namespace:
 * it mounts with root's reach (workspaces may sit in a 0700 data dir) and the command itself drops to
 * the sandbox uid (see bwrap-launch.ts).
 */
export function bwrapIsolationArgs(privileged: boolean): string[] {
  const namespaces = privileged
    ? ['--unshare-pid', '--unshare-net', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup']
    : ['--unshare-all'];
  return [...namespaces, '--die-with-parent', '--new-session', '--hostname', 'sandbox'];
}

/**
 * The supervisor's environment and the sandbox's filesystem. They travel over a pipe (`--args`), off
 * the host's process list, though they hold no secrets any more.
 */
export function bwrapArgs(input: BwrapArgsInput): string[] {
  const args = ['--clearenv'];
  for (const [name, value] of Object.entries(input.env)) args.push('--setenv', name, value);
  args.push('--ro-bind', '/usr', '/usr');
  for (const dir of ['bin', 'lib', 'lib64', 'sbin']) args.push('--symlink', `usr/${dir}`, `/${dir}`);
  args.push('--ro-bind', input.etcDir, '/etc');
  // tmpfs is charged to the sandbox's memory cgroup, so its size needs no limit of its own.
  args.push('--proc', '/proc', '--dev', '/dev', '--perms', '1777', '--tmpfs', '/dev/shm');
  args.push('--perms', '1777', '--tmpfs', '/tmp');
  // Directories bwrap creates on its own get mode 0700 of whoever runs it: as root, the sandbox uid
  // could not reach the code binds below them. They are made after the tmpfs mounts, which would
  // otherwise cover those under /tmp.
  const destinations = [
    ...input.code.map((dir) => dir.inside),
    sandboxPaths.apiSocket,
    ...(input.skills ?? []).map((skill) => skillPath(skill.slug)),
  ];
  for (const dir of ancestorsOf(destinations)) args.push('--perms', '0755', '--dir', dir);
  for (const dir of input.code) args.push('--ro-bind', dir.host, dir.inside);
  if (input.apiSocket) args.push('--ro-bind', input.apiSocket, sandboxPaths.apiSocket);
  if (input.egressSocket) args.push('--ro-bind', input.egressSocket, sandboxPaths.egressSocket);
  if (input.sharedDir) args.push('--bind', input.sharedDir, sandboxPaths.shared);
  // Read-only binds: the sandbox (no capabilities, no `mount` under seccomp) cannot make them writable.
  for (const skill of input.skills ?? []) args.push('--ro-bind', skill.hostDir, skillPath(skill.slug));
  args.push('--bind', input.workspaceDir, sandboxPaths.workspace, '--chdir', sandboxPaths.workspace);
  return args;
}

/** Every proper ancestor of the given absolute paths except `/`, parents before children. */
function ancestorsOf(paths: string[]): string[] {
  const found = new Set<string>();
  for (const path of paths) {
    const parts = path.split('/').filter(Boolean);
    for (let depth = 1; depth < parts.length; depth++) found.add(`/${parts.slice(0, depth).join('/')}`);
  }
  // These are mount points made above, with modes of their own.
  for (const mounted of ['/tmp', '/dev', '/dev/shm', '/proc', '/usr', '/etc']) found.delete(mounted);
  return [...found].sort((a, b) => a.split('/').length - b.split('/').length);
}
