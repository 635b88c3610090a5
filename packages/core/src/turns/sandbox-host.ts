import type {
  DraftEvent,
  EventData,
  MachineKind,
  MachineSize,
  ModelSettings,
  OutcomeStatus,
  SandboxExec,
  SandboxExecResult,
  StopReason,
} from '@paddock/protocol';

/** A conversation message as harnesses exchange it (the AI SDK's ModelMessage shape). */
export interface ConversationMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: unknown;
}

export interface TurnResult {
  stopReason: StopReason;
  outcome?: { status: OutcomeStatus; summary: string };
  messages: ConversationMessage[];
  /** Ids of the assistant messages among `messages`, in order (their `assistant.message` events' `message_id`). */
  assistantIds?: string[];
  lastAssistantText: string;
  error?: { code: string; message: string; retryable: boolean };
  /** Ids of the messages steered into the turn, in the order it took them. */
  steeredIds?: string[];
}

/** A turn for the sandbox; the harness reaches the model gateway with the sandbox's own token. */
export interface TurnCommand {
  turn_id: string;
  harness: string;
  model: string;
  instructions?: string;
  messages: ConversationMessage[];
  /** What the turn's model calls apply, from the `model_options` of the inputs it took. */
  model_options?: ModelSettings;
}

/**
 * Takes a turn's events in the order the harness emitted them and settles once each is stored.
 * `index` numbers them from 0 on hosts whose turns outlive a server (a detached runner): the
 * executor stores it with the event, so a restarted server asks for the rest from the next one.
 */
export type TurnEventSink = (event: DraftEvent, index?: number) => Promise<void>;

/**
 * How a provider's sandboxes age: while idle a sandbox is stopped with its workspace kept after
 * `stopAfterMs` (`sandbox_c` is frozen first, after `freezeAfterMs`); `sandbox_d` ends for good at
 * `expiresAt` (epoch ms).
 */
export interface SandboxLifecycle {
  idle?: { freezeAfterMs?: number; stopAfterMs: number };
  expiresAt?: number;
}

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

/** The sandbox host as core uses it: the in-process runner, or a detached one behind the same seam. */
export interface SandboxHost {
  /**
   * Says whose the thread's sandbox is, before any other call for the thread (a turn's start, its
   * adoption, a boot): a host that routes by provider (self-hosted runners) picks by it.
   */
  place?(threadId: string, placement: SandboxPlacement): void;
  /**
   * `undefined` for the in-process runner, whose turns die with the server; else the id of the
   * detached runner that hosts (or will host) the thread, whose turns a restarted server adopts.
   */
  runnerFor(threadId: string): string | undefined;
  isRunning(threadId: string): boolean;
  /**
   * Threads whose sandboxes this host runs or boots now: renewed in the database as live, for the
   * organizations' limits. Absent: none count (a self-hosted runner's).
   */
  liveThreadIds?(): string[];
  /**
   * Whether this host is booting the thread's sandbox now (a first boot runs the entrypoint, which
   * may still be writing the workspace). Absent means it never reports one.
   */
  isBooting?(threadId: string): boolean;
  /**
   * Boots the thread's sandbox unless it runs. `env` holds the agent's secrets and PADDOCK_TOKEN;
   * the host adds PADDOCK_API_URL. The entrypoint runs on the thread's first boot only. Answers
   * whether this call booted it (so `env` took effect), false when it was running already.
   */
  ensure(
    threadId: string,
    options: {
      workspaceDir: string;
      env: Record<string, string>;
      size: MachineSize;
      entrypoint?: string;
      onEntrypointOutput(
        stream: EventData['entrypoint.output']['stream'],
        text: string,
        exitCode?: number,
      ): void;
      onStatus(status: EventData['sandbox.status']): void;
      /** How the sandbox ages, by its provider (read at boot). */
      lifecycle?: SandboxLifecycle;
      /** The team's shared folder on the host, shown at `/shared` (providers with shared folders). */
      sharedDir?: string;
    },
  ): Promise<boolean>;
  runTurn(threadId: string, command: TurnCommand, onEvent: TurnEventSink): Promise<TurnResult>;
  /** Picks up a turn a detached runner kept running (adoption): its events from `fromIndex`, then its result. */
  attach?(threadId: string, turnId: string, fromIndex: number, onEvent: TurnEventSink): Promise<TurnResult>;
  /** The turn's result is stored; the host may forget the turn. */
  release?(turnId: string): void;
  interrupt(threadId: string, turnId: string): void;
  /**
   * Interrupts a turn the thread's sandbox runs that no server follows any more (a restart left it
   * behind past the adoption window); a turn a server follows is left alone.
   */
  interruptOrphan?(threadId: string): void;
  /**
   * Whether this host can interrupt the thread's turns safely; asked as a turn starts and recorded
   * on it, so a Stop on any node knows. Absent means it can.
   */
  canInterrupt?(threadId: string): boolean;
  /** Offers messages to the thread's running turn (native steering); false when it did not take them. */
  steer(threadId: string, turnId: string, messages: { id: string; content: string }[]): Promise<boolean>;
  /**
   * Runs code in the thread's running sandbox (call `ensure` first) as its tools run: in its
   * workspace, with its environment, as the sandbox uid; or probes which languages it has. It runs
   * beside a turn, if one runs, and is no part of it. Rejects when the sandbox is not running, dies
   * meanwhile, or its runner disconnects; a program that fails still answers its result.
   */
  exec<E extends SandboxExec>(threadId: string, request: E): Promise<SandboxExecResult<E>>;
}

/** Tells the host whose the thread's sandbox is (see `SandboxHost.place`). */
export function placeThread(
  sandboxes: SandboxHost,
  threadId: string,
  agent: { id: string; machine_kind: string },
): void {
  sandboxes.place?.(threadId, { agentId: agent.id, machineKind: agent.machine_kind as MachineKind });
}
