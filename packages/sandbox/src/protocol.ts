import type { GatewayAccess, HarnessTurnResult } from '@paddock/harness';
import type { DraftEvent } from '@paddock/protocol';
import type { ModelMessage } from 'ai';

/**
 * The supervisor inside a sandbox speaks newline-delimited JSON over stdio with the runner.
 * Runner → supervisor on stdin; supervisor → runner on stdout. stderr is free-form diagnostics.
 */
export type RunnerCommand =
  | { type: 'entrypoint'; script: string }
  | {
      type: 'turn';
      turn_id: string;
      harness: string;
      model: string;
      instructions?: string;
      messages: ModelMessage[];
      gateway: GatewayAccess;
    }
  | { type: 'interrupt'; turn_id: string }
  | { type: 'shutdown' };

export type SupervisorMessage =
  | { type: 'ready'; pid: number }
  | { type: 'entrypoint.output'; stream: 'stdout' | 'stderr'; text: string }
  | { type: 'entrypoint.exit'; exit_code: number }
  | { type: 'event'; turn_id: string; event: DraftEvent }
  | { type: 'turn.result'; turn_id: string; result: HarnessTurnResult }
  | { type: 'log'; level: 'info' | 'warn' | 'error'; message: string };

export type TurnCommand = Extract<RunnerCommand, { type: 'turn' }>;
