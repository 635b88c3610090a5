import type { Harness, HarnessTurnResult } from '@paddock/harness';
import type { TurnCommand } from '../protocol.ts';
import { send } from './send.ts';

/** The part of `@paddock/harness` the supervisor uses. */
export interface HarnessModule {
  getHarness(name: string): Harness | undefined;
  preloadHarnesses(): Promise<void>;
}

/** What `configure` told the supervisor: the environment of everything it starts, and where the workspace is. */
export interface SandboxContext {
  env: Record<string, string>;
  workspaceDir: string;
}

/** A harness that ignores its abort signal still gets its turn ended this long after an interrupt. */
const interruptGraceMs = 5_000;

interface ActiveTurn {
  turnId: string;
  controller: AbortController;
  finish(result: HarnessTurnResult): void;
}

/** Runs one turn at a time and reports each as `turn.result`, whatever the harness does. */
export class TurnRunner {
  readonly #loadHarnesses: () => Promise<HarnessModule>;
  #active: ActiveTurn | undefined;
  /**
   * Interrupts for turns not started yet: a turn waits for `configure` and the proxy before it gets
   * here, and an interrupt sent in that window must still stop it.
   */
  readonly #interruptedEarly = new Set<string>();

  constructor(loadHarnesses: () => Promise<HarnessModule>) {
    this.#loadHarnesses = loadHarnesses;
  }

  async run(command: TurnCommand, context: SandboxContext): Promise<void> {
    const turnId = command.turn_id;
    if (this.#active) {
      const busy = `turn ${this.#active.turnId} is still running`;
      send({ type: 'turn.result', turn_id: turnId, result: failed('sandbox_busy', busy, true) });
      return;
    }
    if (this.#interruptedEarly.delete(turnId)) {
      send({ type: 'turn.result', turn_id: turnId, result: cancelled() });
      return;
    }
    const controller = new AbortController();
    let finished = false;
    let graceTimer: NodeJS.Timeout | undefined;
    const finish = (result: HarnessTurnResult): void => {
      if (finished) return;
      finished = true;
      clearTimeout(graceTimer);
      this.#active = undefined;
      send({ type: 'turn.result', turn_id: turnId, result });
    };
    controller.signal.addEventListener('abort', () => {
      graceTimer = setTimeout(() => finish(cancelled()), interruptGraceMs);
    });
    this.#active = { turnId, controller, finish };

    let harness: Harness | undefined;
    try {
      harness = (await this.#loadHarnesses()).getHarness(command.harness);
    } catch (error) {
      finish(
        failed('harness_unavailable', `cannot load harness ${command.harness}: ${describe(error)}`, false),
      );
      return;
    }
    if (!harness) {
      finish(failed('harness_unavailable', `no harness named ${command.harness}`, false));
      return;
    }
    try {
      const result = await harness.runTurn({
        turnId,
        model: command.model,
        instructions: command.instructions,
        messages: command.messages,
        gateway: command.gateway,
        workspaceDir: context.workspaceDir,
        env: context.env,
        signal: controller.signal,
        emit: (event) => {
          if (!finished) send({ type: 'event', turn_id: turnId, event });
        },
      });
      finish(result);
    } catch (error) {
      send({ type: 'log', level: 'error', message: `harness ${command.harness} crashed: ${stackOf(error)}` });
      finish(failed('harness_crashed', describe(error), false));
    }
  }

  interrupt(turnId: string): void {
    if (this.#active?.turnId === turnId) this.#active.controller.abort();
    else this.#interruptedEarly.add(turnId);
  }

  /** Ends the running turn, if any, after an error nothing caught. */
  crash(error: unknown): void {
    const active = this.#active;
    if (!active) return;
    active.controller.abort();
    active.finish(failed('harness_crashed', describe(error), false));
  }
}

function failed(code: string, message: string, retryable: boolean): HarnessTurnResult {
  return { stopReason: 'error', messages: [], lastAssistantText: '', error: { code, message, retryable } };
}

function cancelled(): HarnessTurnResult {
  return { stopReason: 'cancelled', messages: [], lastAssistantText: '' };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function stackOf(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}
