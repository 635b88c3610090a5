import type {
  DraftEvent,
  EventData,
  MachineKind,
  MachineSize,
  NetworkPolicy,
  SandboxExec,
  SandboxExecResult,
  SandboxLifecycle,
  SteeredMessage,
  TurnCommand,
  TurnResult,
} from '@paddock/protocol';

/**
 * Takes a turn's events in the order the harness emitted them and settles once each is stored.
 * `index` numbers them from 0 on hosts whose turns outlive a server (a detached runner): the
 * executor stores it with the event, so a restarted server asks for the rest from the next one.
 */
export type TurnEventSink = (event: DraftEvent, index?: number) => Promise<void>;

/** Whose sandbox a thread's is: its agent and that agent's provider. */
export interface SandboxPlacement {
  agentId: string;
  machineKind: MachineKind;
}

/**
 * A sandbox that cannot be booted because no host for it is there (no self-hosted runner of the
 * agent is connected): the turn fails with this code rather than `sandbox_failed`.
 */
export class SandboxUnavailableError extends Error {
  readonly code = 'runner_unavailable';
}

/** A boot of a thread's sandbox, as `SandboxHost.ensure` takes it. */
export interface SandboxBoot {
  workspaceDir: string;
  env: Record<string, string>;
  size: MachineSize;
  entrypoint?: string;
  onEntrypointOutput(stream: EventData['entrypoint.output']['stream'], text: string, exitCode?: number): void;
  onStatus(status: EventData['sandbox.status']): void;
  /** How the sandbox ages, by its provider (read at boot). */
  lifecycle?: SandboxLifecycle;
  /** The team's shared folder on the host, shown at `/shared` (providers with shared folders). */
  sharedDir?: string;
  /** The thread's skills: folders on the host, shown read-only at `/skills/<slug>` (D14). */
  skills?: { slug: string; hostDir: string }[];
  /**
   * The thread's skills for a host on another machine (self-hosted runners, sandbox_e), which
   * cannot see the server's folders: it writes each version's folder itself, asking for the files
   * of the ones it does not have while this boot is open (D14).
   */
  skillVersions?: RemoteSkill[];
  /** What the sandbox may reach through its egress proxy (issue 15); `registries` when left out. */
  network?: NetworkPolicy;
}

/**
 * Stores a connection a thread's sandbox made through its egress proxy (its `network.request`
 * event); each host is given one and reports every sandbox's connections to it.
 */
export type NetworkRecorder = (threadId: string, record: EventData['network.request']) => void;

/** A skill version as a remote host gets it: `digest` is the registry's hash of its files. */
export interface RemoteSkill {
  slug: string;
  creator: string;
  version: string;
  digest: string;
  /** Sorted by path, bytes in base64, as the registry stores them. */
  files: { path: string; content: string }[];
}

/**
 * The sandbox host as core uses it: the in-process runner, or detached ones behind the same seam.
 * Every host answers every member here; what only hosts whose turns outlive a server can do is
 * `AdoptingSandboxHost`.
 */
export interface SandboxHost {
  /**
   * Whether this host keeps turns running past the server that started them, for a restarted
   * server to adopt (detached and self-hosted runners): such a host is an `AdoptingSandboxHost`.
   */
  readonly adoptsTurns: boolean;
  /**
   * Says whose the thread's sandbox is, before any other call for the thread (a turn's start, its
   * adoption, a boot): a host that routes by provider (self-hosted runners) picks by it; the
   * others have nothing to do with it.
   */
  place(threadId: string, placement: SandboxPlacement): void;
  /**
   * `undefined` for the in-process runner, whose turns die with the server; else the id of the
   * detached runner that hosts (or will host) the thread, whose turns a restarted server adopts.
   */
  runnerFor(threadId: string): string | undefined;
  isRunning(threadId: string): boolean;
  /**
   * Threads whose sandboxes this host runs or boots now: renewed in the database as live, for the
   * organizations' limits. A self-hosted runner's count for none.
   */
  liveThreadIds(): string[];
  /**
   * Whether this host is booting the thread's sandbox now (a first boot runs the entrypoint, which
   * may still be writing the workspace).
   */
  isBooting(threadId: string): boolean;
  /**
   * Whether this host can interrupt the thread's turns safely; asked as a turn starts and recorded
   * on it, so a Stop on any node knows.
   */
  canInterrupt(threadId: string): boolean;
  /**
   * Boots the thread's sandbox unless it runs. `env` holds the agent's secrets and PADDOCK_TOKEN;
   * the host adds PADDOCK_API_URL. The entrypoint runs on the thread's first boot only. Answers
   * whether this call booted it (so `env` took effect), false when it was running already.
   */
  ensure(threadId: string, boot: SandboxBoot): Promise<boolean>;
  runTurn(threadId: string, command: TurnCommand, onEvent: TurnEventSink): Promise<TurnResult>;
  interrupt(threadId: string, turnId: string): void;
  /** Offers messages to the thread's running turn (native steering); false when it did not take them. */
  steer(threadId: string, turnId: string, messages: SteeredMessage[]): Promise<boolean>;
  /**
   * Runs code in the thread's running sandbox (call `ensure` first) as its tools run: in its
   * workspace, with its environment, as the sandbox uid; or probes which languages it has. It runs
   * beside a turn, if one runs, and is no part of it. Rejects when the sandbox is not running, dies
   * meanwhile, or its runner disconnects; a program that fails still answers its result.
   */
  exec<E extends SandboxExec>(threadId: string, request: E): Promise<SandboxExecResult<E>>;
}

/** A host whose turns outlive the server that started them (detached and self-hosted runners). */
export interface AdoptingSandboxHost extends SandboxHost {
  readonly adoptsTurns: true;
  /**
   * The runners connected to this server now: the machines it reaches besides itself (a
   * self-hosted runner hosts its own agent's threads only).
   */
  connectedRunners(): { runnerId: string; selfHosted: boolean }[];
  /** Picks up a turn a detached runner kept running (adoption): its events from `fromIndex`, then its result. */
  attach(threadId: string, turnId: string, fromIndex: number, onEvent: TurnEventSink): Promise<TurnResult>;
  /** The turn's result is stored; the host may forget the turn. */
  release(turnId: string): void;
  /**
   * Interrupts a turn the thread's sandbox runs that no server follows any more (a restart left it
   * behind past the adoption window); a turn a server follows is left alone.
   */
  interruptOrphan(threadId: string): void;
}

/** Whether the host has turns to adopt, release and find orphaned (see `SandboxHost.adoptsTurns`). */
export function isAdoptingHost(host: SandboxHost): host is AdoptingSandboxHost {
  return host.adoptsTurns;
}

/** Tells the host whose the thread's sandbox is (see `SandboxHost.place`). */
export function placeThread(
  sandboxes: SandboxHost,
  threadId: string,
  agent: { id: string; machine_kind: string },
): void {
  sandboxes.place(threadId, { agentId: agent.id, machineKind: agent.machine_kind as MachineKind });
}
