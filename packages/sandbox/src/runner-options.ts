import type { ProgramCache } from '@paddock/harness';
import type { SandboxBooterOptions } from './sandbox-booter.ts';

export type RunnerLog = (level: 'info' | 'warn' | 'error', message: string) => void;

export interface RunnerOptions extends SandboxBooterOptions {
  log?: RunnerLog;
  /** How long a stopped supervisor gets to exit on its own before it is killed. */
  stopGraceMs?: number;
  /**
   * The cache of ACP programs its provider shows the sandboxes (D9): a turn whose harness is one
   * installs its program here first. Without it such turns fail with `harness_unavailable`.
   */
  programs?: ProgramCache;
}
