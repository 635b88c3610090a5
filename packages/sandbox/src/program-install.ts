import type { ProgramCache } from '@paddock/harness';
import type { DraftEvent, HarnessProfile, TurnCommand, TurnResult } from '@paddock/protocol';
import type { ModelMessage } from 'ai';
import type { RunnerLog } from './runner-options.ts';

/**
 * A runner's installs of ACP programs for turns (D9): the first turn that needs a program installs
 * it (concurrent turns share one install, `ProgramCache`), and an interrupt meanwhile cancels the
 * turn before it reaches the sandbox.
 */
export class TurnPrograms {
  readonly #programs: ProgramCache | undefined;
  readonly #log: RunnerLog;
  /** Turns waiting for their program's install, by thread; an interrupt marks them cancelled. */
  readonly #installing = new Map<string, { turnId: string; cancelled: boolean }>();

  constructor(programs: ProgramCache | undefined, log: RunnerLog) {
    this.#programs = programs;
    this.#log = log;
  }

  /** Whether the turn must wait for an install (a check of memory once the program is in place). */
  needed(profile: HarnessProfile | undefined): profile is HarnessProfile {
    return profile !== undefined && !this.#programs?.isInstalled(profile);
  }

  /** Installs the turn's program; answers the turn's result when it must not run (failed or interrupted). */
  async install(
    threadId: string,
    command: TurnCommand,
    profile: HarnessProfile,
    onEvent: (event: DraftEvent) => void,
  ): Promise<TurnResult<ModelMessage> | undefined> {
    const pending = { turnId: command.turn_id, cancelled: false };
    this.#installing.set(threadId, pending);
    try {
      const failed = await installTurnProgram(this.#programs, command, profile, onEvent, this.#log);
      if (failed) return failed;
      if (pending.cancelled) return { stopReason: 'cancelled', messages: [], lastAssistantText: '' };
      return undefined;
    } finally {
      if (this.#installing.get(threadId) === pending) this.#installing.delete(threadId);
    }
  }

  interrupt(threadId: string, turnId: string): void {
    const installing = this.#installing.get(threadId);
    if (installing?.turnId === turnId) installing.cancelled = true;
  }
}

/**
 * Installs the turn's ACP program unless the cache has it, its progress on the thread as
 * `harness.install` events; answers the turn's `harness_unavailable` result when it cannot be
 * installed, else undefined.
 */
async function installTurnProgram(
  programs: ProgramCache | undefined,
  command: TurnCommand,
  profile: HarnessProfile,
  onEvent: (event: DraftEvent) => void,
  log: RunnerLog,
): Promise<TurnResult<ModelMessage> | undefined> {
  const about = { harness: command.harness, program: profile.program, version: profile.version };
  const event = (status: 'installing' | 'installed' | 'failed', detail: string) =>
    onEvent({ type: 'harness.install', data: { ...about, status, detail } });
  if (!programs) {
    const reason = 'this runner keeps no program cache';
    event('failed', reason);
    return harnessUnavailable(`${profile.program} ${profile.version} is not installed: ${reason}`);
  }
  try {
    const summary = await programs.ensure(profile, (line) => event('installing', line));
    event('installed', summary ?? 'installed');
    return undefined;
  } catch (error) {
    const reason = (error as Error).message;
    log('warn', `turn ${command.turn_id}: cannot install ${profile.program} ${profile.version}: ${reason}`);
    event('failed', reason);
    return harnessUnavailable(`cannot install ${profile.program} ${profile.version}: ${reason}`);
  }
}

function harnessUnavailable(message: string): TurnResult<ModelMessage> {
  return {
    stopReason: 'error',
    messages: [],
    lastAssistantText: '',
    error: { code: 'harness_unavailable', message, retryable: false },
  };
}
