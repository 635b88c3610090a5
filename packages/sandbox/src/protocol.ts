import type {
  DraftEvent,
  HarnessProfile,
  SandboxExec,
  SandboxExecResult,
  SteeredMessage,
  TurnCommand,
  TurnResult,
} from '@paddock/protocol';
import type { ModelMessage } from 'ai';

/**
 * The supervisor inside a sandbox speaks newline-delimited JSON over stdio with the runner.
 * Runner → supervisor on stdin; supervisor → runner on stdout. stderr is free-form diagnostics.
 */
export type RunnerCommand =
  /**
   * Sent once, before anything else: the exact environment of the entrypoint, the tools and the
   * harness. It travels on stdin so that the thread's secrets are in no process's own environment
   * and on no command line, and so a sandbox can boot before it knows which thread it serves.
   * `entrypoint` and `turn` wait for it.
   */
  | { type: 'configure'; env: Record<string, string> }
  | { type: 'entrypoint'; script: string }
  /** A turn to run; answered by its `event`s, then one `turn.result`. */
  | ({ type: 'turn' } & TurnCommand)
  | { type: 'interrupt'; turn_id: string }
  /** Messages for the running turn (native steering); answered by one `steer.result`. */
  | { type: 'steer'; turn_id: string; steer_id: string; messages: SteeredMessage[] }
  /**
   * Code to run beside any turn (the code endpoints), or a probe of the languages; answered by one
   * `exec.result`. It waits for `configure`, like a turn.
   */
  | { type: 'exec'; exec_id: string; request: SandboxExec }
  /**
   * To a standby sandbox: start these ACP programs and open their sessions ahead of any thread,
   * with `env`, the sandbox's environment without a thread's parts. Answered by `agents.started`.
   */
  | { type: 'start.agents'; harnesses: StandbyAgent[]; env: Record<string, string> }
  | { type: 'shutdown' };

/** A harness value whose program a standby sandbox starts ahead of its thread, and its profile. */
export interface StandbyAgent {
  name: string;
  profile: HarnessProfile;
}

export type SupervisorMessage =
  | { type: 'steer.result'; steer_id: string; delivered: boolean }
  /** `error` when the request could not be carried out; a program that fails still has a `result`. */
  | { type: 'exec.result'; exec_id: string; result?: SandboxExecResult; error?: string }
  | { type: 'ready'; pid: number }
  /**
   * The harness (the AI SDK behind it) is imported and, in a sandbox still waiting for `configure`,
   * warmed by a throwaway turn: a first turn waits for neither any more.
   */
  | { type: 'warm' }
  /** The programs of `start.agents` that started (the others said why in a `log`). */
  | { type: 'agents.started'; harnesses: string[] }
  | { type: 'entrypoint.output'; stream: 'stdout' | 'stderr'; text: string }
  | { type: 'entrypoint.exit'; exit_code: number }
  | { type: 'event'; turn_id: string; event: DraftEvent }
  | { type: 'turn.result'; turn_id: string; result: TurnResult<ModelMessage> }
  | { type: 'log'; level: 'info' | 'warn' | 'error'; message: string };
