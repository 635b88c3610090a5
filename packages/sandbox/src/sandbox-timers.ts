import type { SandboxLifecycle } from '@paddock/protocol';

/** One sandbox's timers for its lifecycle; the runner says when it is busy and when idle. */
export class SandboxTimers {
  readonly #lifecycle: SandboxLifecycle;
  readonly #actions: { freeze(): void; stop(reason: 'idle' | 'lifetime'): void };
  #idleTimers: NodeJS.Timeout[] = [];
  readonly #lifetime: NodeJS.Timeout | undefined;

  constructor(
    lifecycle: SandboxLifecycle,
    actions: { freeze(): void; stop(reason: 'idle' | 'lifetime'): void },
  ) {
    this.#lifecycle = lifecycle;
    this.#actions = actions;
    if (lifecycle.expiresAt !== undefined) {
      this.#lifetime = setTimeout(
        () => actions.stop('lifetime'),
        Math.max(0, lifecycle.expiresAt - Date.now()),
      );
      this.#lifetime.unref();
    }
  }

  /** Work arrived: it must not fall asleep under it. */
  busy(): void {
    for (const timer of this.#idleTimers) clearTimeout(timer);
    this.#idleTimers = [];
  }

  /** Nothing runs any more: the idle clock starts again. */
  idle(): void {
    this.busy();
    const idle = this.#lifecycle.idle;
    if (!idle) return;
    this.#idleTimers = [setTimeout(() => this.#actions.stop('idle'), idle.stopAfterMs)];
    if (idle.freezeAfterMs !== undefined)
      this.#idleTimers.push(setTimeout(() => this.#actions.freeze(), idle.freezeAfterMs));
    for (const timer of this.#idleTimers) timer.unref();
  }

  clear(): void {
    this.busy();
    clearTimeout(this.#lifetime);
  }
}
