import type { HarnessTurnResult } from '@paddock/harness';
import type { DraftEvent, SandboxExec, SandboxExecResult } from '@paddock/protocol';
import type { TurnCommand } from '../protocol.ts';
import type { SandboxSize } from '../provider.ts';
import type { SandboxLifecycle } from '../sandbox-timers.ts';
import type { EntrypointStream, SandboxStatus } from '../thread-sandbox.ts';

/**
 * A detached runner (`paddock runner`) and the server speak JSON messages over one WebSocket, which
 * the runner opens and reopens. Everything a turn produces is numbered (`index`, from 0) and kept
 * by the runner until the server acknowledges it as stored, so after a reconnect, or a restart of
 * the server, the server asks for the rest from the first index it has not stored: nothing is lost
 * and nothing is stored twice.
 */
export type ServerMessage =
  | {
      type: 'ensure';
      req: number;
      thread_id: string;
      workspace_dir: string;
      /** The agent's secrets and PADDOCK_TOKEN; the runner adds PADDOCK_API_URL as it reaches the server. */
      env: Record<string, string>;
      size: SandboxSize;
      entrypoint?: string;
      lifecycle?: SandboxLifecycle;
      shared_dir?: string;
    }
  | { type: 'turn'; thread_id: string; command: Omit<TurnCommand, 'type'> }
  /** Send the turn's messages from `from_index` on, then keep sending (adoption, or a reconnect). */
  | { type: 'attach'; turn_id: string; from_index: number }
  /** Everything of the turn up to `index` is stored; a stored result ends the runner's record of it. */
  | { type: 'ack'; turn_id: string; index: number }
  /**
   * No server will take this turn any more (the adoption window passed): forget what it produces.
   * It runs on, and the sandbox refuses new turns meanwhile, until it ends or a Stop interrupts it.
   */
  | { type: 'abandon'; turn_id: string }
  | { type: 'interrupt'; thread_id: string; turn_id: string }
  /** Interrupt the thread's running turn if it is one no server follows (abandoned, or unknown here). */
  | { type: 'interrupt-orphan'; thread_id: string }
  | {
      type: 'steer';
      req: number;
      thread_id: string;
      turn_id: string;
      messages: { id: string; content: string }[];
    }
  /** Code to run in the thread's running sandbox beside any turn; answered by one `exec.result`. */
  | { type: 'exec'; req: number; thread_id: string; request: SandboxExec };

export type RunnerMessage =
  | {
      type: 'hello';
      runner_id: string;
      /** Threads whose sandbox runs here. */
      sandboxes: string[];
      /** Turns this runner still holds something of: running, or finished with the result not acknowledged. */
      turns: { turn_id: string; thread_id: string }[];
    }
  | { type: 'ensure.status'; req: number; status: SandboxStatus }
  | { type: 'ensure.output'; req: number; stream: EntrypointStream; text: string; exit_code?: number }
  | { type: 'ensure.done'; req: number; booted: boolean; error?: string }
  | { type: 'sandbox.gone'; thread_id: string; status: SandboxStatus }
  | { type: 'turn.event'; turn_id: string; index: number; event: DraftEvent }
  | { type: 'turn.result'; turn_id: string; index: number; result: HarnessTurnResult }
  | { type: 'steer.result'; req: number; taken: boolean }
  /** `error` when the sandbox could not run it (none runs, it died); a failing program has a `result`. */
  | { type: 'exec.result'; req: number; result?: SandboxExecResult; error?: string };

export type TurnEntry = Extract<RunnerMessage, { type: 'turn.event' | 'turn.result' }>;

/** The path of the server's runner endpoint. */
export const runnerLinkPath = '/v2/runner/link';
