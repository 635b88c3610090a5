import { randomInt } from 'node:crypto';

/** How a request ends: its answer, or why there is none. */
export type Outcome<T> = { value: T } | { error: Error };

interface Entry<T, D> {
  runnerId: string;
  data: D;
  settle(outcome: Outcome<T>): void;
}

/**
 * The server's requests to runners that wait for one answer (a boot, a steer, a code run), by
 * request number. An answer counts only from the runner the request went to (a self-hosted runner
 * could guess numbers); a request ends once, by its answer, its runner's disconnect, or its timeout.
 */
export class PendingRequests<T, D = undefined> {
  readonly #entries = new Map<number, Entry<T, D>>();
  /**
   * Request numbers start at random: a runner may answer, after a reconnect, a request of the server
   * before a restart, which must not pass for one of this server's.
   */
  #last = randomInt(2 ** 47);

  /**
   * Numbers a request to `runnerId`, hands the number to `send`, and waits for the request to end.
   * With `timeout`, it ends by itself after `ms` with the outcome `timeout` gives.
   */
  open(
    runnerId: string,
    data: D,
    send: (req: number) => void,
    timeout?: { ms: number; outcome(): Outcome<T> },
  ): Promise<T> {
    const req = ++this.#last;
    return new Promise<T>((resolve, reject) => {
      const timer = timeout && setTimeout(() => this.settle(runnerId, req, timeout.outcome()), timeout.ms);
      timer?.unref();
      this.#entries.set(req, {
        runnerId,
        data,
        settle: (outcome) => {
          clearTimeout(timer);
          if ('value' in outcome) resolve(outcome.value);
          else reject(outcome.error);
        },
      });
      send(req);
    });
  }

  /** What the open request `req` of `runnerId` carries; undefined when it has none such. */
  get(runnerId: string, req: number): D | undefined {
    const entry = this.#entries.get(req);
    return entry?.runnerId === runnerId ? entry.data : undefined;
  }

  /** Ends the open request `req` of `runnerId`; false when it has none such. */
  settle(runnerId: string, req: number, outcome: Outcome<T>): boolean {
    const entry = this.#entries.get(req);
    if (entry?.runnerId !== runnerId) return false;
    this.#entries.delete(req);
    entry.settle(outcome);
    return true;
  }

  /** Ends every open request of `runnerId` (it disconnected). */
  settleAll(runnerId: string, outcome: Outcome<T>): void {
    for (const [req, entry] of this.#entries)
      if (entry.runnerId === runnerId) this.settle(runnerId, req, outcome);
  }
}
