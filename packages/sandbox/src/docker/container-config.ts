import type { CodeDir } from '../code-paths.ts';
import type { SandboxLimits } from '../limits.ts';
import type { SkillMount } from '../provider.ts';
import { sandboxPaths, skillPath } from '../sandbox-paths.ts';

/** Labels every sandbox container carries, so a runner finds what a crashed one left behind. */
export const containerLabels = { sandbox: 'dev.paddock.sandbox', runner: 'dev.paddock.runner' };

export interface ContainerConfigInput {
  image: string;
  /** The sandbox id (one path segment); names the container. */
  id: string;
  /** Identifies the runner that owns the container (see `containerLabels`). */
  runnerKey: string;
  /** The supervisor's argv; fixed paths only, never anything of a thread. */
  command: string[];
  /** The supervisor's own environment; the thread's arrives over stdin (`configure`). */
  env: Record<string, string>;
  /** The uid (and gid) everything in the container runs as. */
  uid: number;
  /**
   * The supervisor starts as root with only CAP_SETUID and CAP_SETGID and takes `uid` itself (its
   * `--uid`), so that nothing running as `uid` can trace or signal it.
   */
  supervisorDrops?: boolean;
  workspaceDir: string;
  /** Bound read-only (the supervisor and Node under /opt/paddock; see code-paths.ts). */
  code: CodeDir[];
  /** Host path of the runner's API proxy socket, bound at /run/paddock/api.sock. */
  apiSocket?: string;
  /** Host path of the sandbox's egress proxy socket, bound at /run/paddock/egress.sock. */
  egressSocket?: string;
  /** Skill folders bound read-only at /skills/<slug>. */
  skills?: SkillMount[];
  limits: SandboxLimits;
}

const cpuPeriodMicros = 100_000;

/**
 * The Engine API's container create body for one sandbox: the supervisor on stdin/stdout (no TTY;
 * stdin closes when the runner's attachment does), no network but loopback, an unprivileged user
 * without capabilities, a read-only image, the size's limits, and no log kept by the engine (the
 * supervisor's output carries the thread's conversation).
 */
export function containerConfig(input: ContainerConfigInput): object {
  const binds = input.code.map((dir) => `${dir.host}:${dir.inside}:ro`);
  if (input.apiSocket) binds.push(`${input.apiSocket}:${sandboxPaths.apiSocket}:ro`);
  if (input.egressSocket) binds.push(`${input.egressSocket}:${sandboxPaths.egressSocket}:ro`);
  binds.push(`${input.workspaceDir}:${sandboxPaths.workspace}`);
  for (const skill of input.skills ?? []) binds.push(`${skill.hostDir}:${skillPath(skill.slug)}:ro`);
  return {
    Image: input.image,
    Entrypoint: [],
    Cmd: input.command,
    Env: Object.entries(input.env).map(([name, value]) => `${name}=${value}`),
    User: input.supervisorDrops ? '0:0' : `${input.uid}:${input.uid}`,
    WorkingDir: sandboxPaths.workspace,
    Hostname: 'sandbox',
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
    OpenStdin: true,
    StdinOnce: true,
    Tty: false,
    NetworkDisabled: true,
    Labels: { [containerLabels.sandbox]: input.id, [containerLabels.runner]: input.runnerKey },
    HostConfig: {
      NetworkMode: 'none',
      Binds: binds,
      ReadonlyRootfs: true,
      Tmpfs: { '/tmp': 'rw,nosuid,nodev,mode=1777' },
      CapDrop: ['ALL'],
      ...(input.supervisorDrops ? { CapAdd: ['SETUID', 'SETGID'] } : {}),
      // No `seccomp=`: the engine's default profile applies (no mount, keyctl, bpf, namespaces, …).
      SecurityOpt: ['no-new-privileges'],
      // docker-init reaps the orphans the agent's commands leave; the supervisor is not pid 1.
      Init: true,
      Memory: input.limits.memoryBytes,
      MemorySwap: input.limits.memoryBytes,
      CpuPeriod: cpuPeriodMicros,
      CpuQuota: input.limits.cpus * cpuPeriodMicros,
      PidsLimit: input.limits.pids,
      LogConfig: { Type: 'none', Config: {} },
      RestartPolicy: { Name: 'no' },
    },
  };
}
