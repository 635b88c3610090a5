import { createHarness, type Harness } from '@paddock/harness';

/**
 * The harnesses of one sandbox, made the first time a turn (or a standby's warm-up) names them: an
 * ACP harness keeps its program and session across the sandbox's turns, so each sandbox has its own.
 */
export class SandboxHarnesses {
  readonly #made = new Map<string, Harness>();

  get(name: string): Harness | undefined {
    const made = this.#made.get(name);
    if (made) return made;
    let harness: Harness;
    try {
      harness = createHarness(name);
    } catch {
      return undefined;
    }
    this.#made.set(name, harness);
    return harness;
  }

  /** The sandbox's thread runs `harness`: the programs a standby started for any other value end. */
  dropStandbysBut(harness: string): void {
    for (const [name, made] of this.#made) if (name !== harness) made.dropStandby?.();
  }
}

const bySandbox = new WeakMap<object, SandboxHarnesses>();

/** The harnesses of a booted sandbox, made with it: a standby's warm-up and its thread's turns share them. */
export function harnessesOf(sandbox: object): SandboxHarnesses {
  let harnesses = bySandbox.get(sandbox);
  if (!harnesses) {
    harnesses = new SandboxHarnesses();
    bySandbox.set(sandbox, harnesses);
  }
  return harnesses;
}
