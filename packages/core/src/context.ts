import type { HarnessProfile, NetworkSettings, Scope, TokenKind } from '@paddock/protocol';
import type { EventLog, TurnQueue } from '@paddock/runtime';
import type { Store } from '@paddock/store';
import type { ProviderPolicy } from './agents/provider-policy.ts';
import type { Revocations } from './auth/revocations.ts';
import type { CreditGate } from './credits/credit-gate.ts';
import type { SecretBox } from './crypto/secret-box.ts';
import type { EvalJudge } from './evals/eval-judge.ts';
import type { Faults } from './faults.ts';
import type { WorkspaceFiles } from './files/workspace-files.ts';
import type { WorkspaceMaker } from './files/workspace-target.ts';
import type { SandboxLimits } from './machines/live-sandboxes.ts';
import type { MachineTimings } from './machines/machine-lifecycle.ts';
import type { OutboundGuard } from './outbound/outbound-guard.ts';
import type { SandboxHost } from './turns/sandbox-host.ts';
import type { TurnTrace } from './turns/turn-trace.ts';
import type { Uploads } from './uploads/upload-store.ts';

/** Who is calling: the user, and the credential they called with (its scopes and resource binding). */
export interface Actor {
  userId: string;
  /** Teams the user belongs to, resolved with the credential on every request. */
  teamIds: ReadonlySet<string>;
  credential: {
    id: string;
    kind: TokenKind | 'session';
    scopes: ReadonlySet<Scope>;
    binding: { type: 'user' } | { type: 'agent'; agentId: string } | { type: 'thread'; threadId: string };
    /** When a login session lapses (epoch ms); tokens carry their expiry in the store. */
    expiresAt?: number;
  };
}

/**
 * Everything core verbs use, built once by the server's wiring, whole, before it listens, and
 * passed in: nothing in it is set later.
 */
export interface HarnessPrograms {
  /**
   * The profile of each harness value that is an ACP program, with the deployment's remaps: the turn
   * command carries it to the runner, which installs the program before the turn.
   */
  readonly profiles: ReadonlyMap<string, HarnessProfile>;
  /** Whether this node's program cache holds the profile's install. */
  isInstalled(profile: HarnessProfile): boolean;
}

export interface Services {
  readonly store: Store;
  readonly events: EventLog;
  readonly secrets: SecretBox;
  readonly providers: ProviderPolicy;
  readonly sandboxes: SandboxHost;
  /** The ACP programs behind harness values (D9); absent where a deployment drives none. */
  readonly harnesses?: HarnessPrograms;
  /**
   * This server's own sandbox hosts (in-process runner, Docker, micro-VMs), whose sandboxes die with
   * it: the `holder` of their thread tokens is `node:<nodeId>`. Stable across restarts on one data dir.
   */
  readonly nodeId: string;
  /** Open event streams end when their credential is revoked (see `Revocations`). */
  readonly revocations: Revocations;
  /** Whether an organization may still use machines (file reads answer 402 when it may not). */
  readonly credits: CreditGate;
  /** Verbs wake the turn worker through it to start queued turns promptly, and Stop cancels one. */
  readonly turnQueue: Pick<TurnQueue, 'wake' | 'cancel'>;
  /** The turn executor's: hands an input to a turn running in this process. */
  readonly steering: {
    deliver(threadId: string, turnId: string, inputId: string): Promise<void>;
    /**
     * Settles once every delivery to the thread that is under way here has its outcome (taken by
     * the turn, or given back); answers whether there were any.
     */
    deliveriesSettled(threadId: string): Promise<boolean>;
  };
  /** Where thread workspaces live on the host: `<dataDir>/workspaces/<thread_id>`. */
  readonly workspacesDir: string;
  /** Makes them (see `ensureWorkspace`): never `mkdir` a workspace anywhere else. */
  readonly workspaces: WorkspaceMaker;
  /** Reads and writes inside a workspace, as the sandbox's user (the server resolves no path there). */
  readonly workspaceFiles: WorkspaceFiles;
  /** Teams' shared folders on the host: `<dataDir>/shared/<team_id>`, at `/shared` in their sandboxes. */
  readonly sharedFoldersDir: string;
  /** Registry skills' folders on the host, `<dataDir>/skills/<creator>/<slug>/<version>`, read-only in sandboxes. */
  readonly skillsDir: string;
  /** Timers of the providers whose sandboxes sleep (sandbox_c) or expire (sandbox_d). */
  readonly machines: MachineTimings;
  /** Each organization's limit on live sandboxes (deployment config). */
  readonly sandboxLimits: SandboxLimits;
  readonly uploads: Uploads;
  readonly defaultModel: string;
  /** The only way to make HTTP requests on a user's behalf: refuses non-public addresses (not allowed). */
  readonly outbound: OutboundGuard;
  /** The deployment's ceiling on agents' network policies, and what every sandbox's proxy adds (issue 15). */
  readonly network: NetworkSettings;
  /** Judges eval runs through the model gateway. */
  readonly judge: EvalJudge;
  readonly log: Logger;
  /** Test-only fault injection; `noFaults` in production. */
  readonly faults: Faults;
  /** Where a follow-up's time goes (`PADDOCK_TRACE_TURNS`); `noTurnTrace` when off. */
  readonly turnTrace: TurnTrace;
}

export interface Logger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/**
 * The server itself, acting on no user's behalf: the turn executor, the sweeps, start-up. It passes
 * no access check (those take a user's `Actor`); what it may do is what the code calling it does.
 */
export interface SystemActor {
  readonly system: string;
}

/** Epoch milliseconds now: the verbs' only clock, so a test can set the time. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/**
 * What every verb takes first: who calls (a user's credential, or the server itself), the database,
 * the time and the log. What else a verb uses it takes as its area's services (a `Pick` of
 * `Services`), second; the routes pass the server's `Services` there.
 */
export interface Ctx<A extends Actor | SystemActor = Actor> {
  readonly actor: A;
  readonly store: Store;
  readonly clock: Clock;
  readonly log: Logger;
}

/** A context for work the server does on its own (see `SystemActor`). */
export function systemCtx(
  services: Pick<Services, 'store' | 'log'>,
  system: string,
  clock = systemClock,
): Ctx<SystemActor> {
  return { actor: { system }, store: services.store, clock, log: services.log };
}
