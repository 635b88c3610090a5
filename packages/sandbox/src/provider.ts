import type { SupervisorClient } from './supervisor-link/supervisor-client.ts';

export type SandboxSize = 'S' | 'M' | 'L';

/** A skill's folder on the host, shown read-only at `/skills/<slug>` (`sandboxPaths.skills`). */
export interface SkillMount {
  slug: string;
  hostDir: string;
}

/**
 * What a boot needs. It holds nothing of the thread (no secrets): the thread's environment arrives
 * later with the `configure` command, so a sandbox can be booted ahead of need.
 */
export interface SandboxSpec {
  /** Unique per boot; names the cgroup, so a fresh boot never collides with a half-cleaned one. */
  id: string;
  /** Host path of the workspace, created by the caller (see workspaces/). */
  workspaceDir: string;
  /**
   * The uid (and gid) the sandbox runs as when the host is root: its workspace's owner, its own among
   * the host's sandboxes. Providers that are not root run sandboxes as their own user.
   */
  uid?: number;
  size: SandboxSize;
  /**
   * Host path of the runner's API proxy socket. Providers that cut the network off bind it into the
   * sandbox, where the supervisor listens on loopback for it; others ignore it.
   */
  apiSocket?: string;
  /**
   * Host path of this sandbox's egress proxy socket (providers with `egress`), which the supervisor
   * serves on the sandbox's loopback port 8788: its only way to anything but the Paddock API.
   */
  egressSocket?: string;
  /** Free-form diagnostics the supervisor writes to stderr. */
  onStderr?: (text: string) => void;
  /** The thread's skills, bound read-only (providers with `skills`); a boot with them is the thread's own. */
  skills?: SkillMount[];
}

export interface SandboxExit {
  code: number | null;
  signal: string | null;
  /** The supervisor broke the protocol, and the sandbox was destroyed for it: why (never what it sent). */
  protocolError?: string;
}

/** A booted supervisor: it has already said `ready` when `create` resolves. */
export interface SandboxProcess {
  readonly id: string;
  /** The supervisor's pid as seen inside the sandbox. */
  readonly pid: number;
  /** The sandbox's hands: every process and file operation of a turn goes through it. */
  readonly supervisor: SupervisorClient;
  /** Settles when the supervisor is gone, however it went. */
  readonly exited: Promise<SandboxExit>;
  /** Kills everything inside (the whole tree, or cgroup) and removes what the boot created. */
  destroy(): Promise<void>;
  /**
   * Freezes (true) or thaws (false) every process inside at once, for a sandbox that sleeps while
   * idle; absent where the provider cannot (no freezer cgroup). Answers whether it took effect.
   */
  setFrozen?(frozen: boolean): Promise<boolean>;
  /**
   * Shows a host directory at the sandbox's `/shared` (a team's shared folder), also in a sandbox
   * booted before its thread was known; present where the provider has shared folders.
   */
  attachShared?(hostDir: string): Promise<void>;
}

export interface SandboxProvider {
  readonly kind: 'bwrap' | 'process' | 'docker' | 'microvm';
  /** Human-readable account of what this provider isolates, for the capabilities endpoint. */
  readonly isolation: string;
  /**
   * Whether its sandboxes reach the outside through an egress proxy of their own
   * (`SandboxSpec.egressSocket`), which applies their thread's network policy. Without it they have
   * the host's network (`process`).
   */
  readonly egress: boolean;
  /** Whether its sandboxes can show a shared folder at `/shared` (see `attachShared`). */
  readonly sharedFolders: boolean;
  /**
   * How its sandboxes show the thread's skills: `bound` read-only at `/skills/<slug>` (see
   * `SandboxSpec.skills`); `host` where its sandboxes see the host's files as they are (no
   * isolation): the booter points PADDOCK_SKILLS_DIR at a folder of the thread's on the host
   * holding a copy of each, which such a sandbox could write to, as to anything its user can.
   */
  readonly skills: 'bound' | 'host';
  /** The directory of the Node binary as its sandboxes see it (the supervisor's, and the programs'). */
  readonly nodeDir: string;
  /** The URL a sandbox reaches the Paddock API at, given the server's own (with the runner's proxy). */
  apiUrlInside(hostApiUrl: string): string;
  /**
   * The environment of everything that runs in a sandbox (what `configure` carries): the thread's
   * variables (secrets, PADDOCK_TOKEN, PADDOCK_API_URL as the host sees it) completed by the
   * provider (PATH, HOME and LANG unless given; PADDOCK_WORKSPACE and PADDOCK_API_URL as seen from
   * inside). `workspaceDir` is the thread's workspace on the host; `size` the sandbox's (its Node
   * programs are told its memory).
   */
  sandboxEnv(workspaceDir: string, env: Record<string, string>, size: SandboxSize): Record<string, string>;
  create(spec: SandboxSpec): Promise<SandboxProcess>;
  /** Releases what the provider holds between boots (it does not destroy sandboxes it created). */
  close(): Promise<void>;
}
