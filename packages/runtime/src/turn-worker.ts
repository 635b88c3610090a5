import { newId, timestamp } from '@paddock/protocol';
import {
  findExpiredRunningTurns,
  pickQueuedTurn,
  renewLease,
  type Store,
  startTurn,
  type TurnRow,
} from '@paddock/store';

export interface TurnWorkerOptions {
  store: Store;
  /** Runs one claimed turn to its end; the signal aborts when the turn is cancelled or the worker stops. */
  execute(turn: TurnRow, signal: AbortSignal): Promise<void>;
  /** Settles a running turn whose lease expired without its owner finishing it. */
  settleExpired(turn: TurnRow): Promise<void>;
  leaseTtlMs: number;
  concurrency: number;
  /** How often to look for work another node queued and for expired leases. */
  pollMs?: number;
  log?: { error(obj: object, msg: string): void };
}

export interface TurnWorker {
  readonly owner: string;
  start(): void;
  /** Looks for queued turns now (called after a turn is enqueued in this process). */
  wake(): void;
  /** Aborts a turn this worker runs; answers whether it was running here. */
  cancel(turnId: string): boolean;
  /** Stops claiming, aborts running turns and waits for them to settle. */
  stop(): Promise<void>;
}

/**
 * The durable turn queue's consumer: claims queued turns under a lease, renews the lease with a
 * heartbeat at a third of its TTL, and notices a cancel requested on another node at each beat.
 */
export function createTurnWorker(options: TurnWorkerOptions): TurnWorker {
  const owner = `worker-${newId()}`;
  const running = new Map<string, AbortController>();
  const settled = new Set<Promise<void>>();
  let stopped = true;
  let claiming = false;
  let again = false;
  let poller: NodeJS.Timeout | undefined;
  let heartbeat: NodeJS.Timeout | undefined;

  const leaseUntil = () => timestamp(new Date(Date.now() + options.leaseTtlMs));

  async function claim(): Promise<TurnRow | undefined> {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        return await options.store.transaction(async (trx) => {
          const turn = await pickQueuedTurn(trx, options.store.dialect);
          if (!turn) return undefined;
          const started = await startTurn(trx, turn.id, { owner, expiresAt: leaseUntil(), at: timestamp() });
          return started ? { ...turn, status: 'running', lease_owner: owner } : undefined;
        });
      } catch (error) {
        // Another node claimed a turn of the same thread first: the unique index refused ours.
        if (!isUniqueViolation(error)) throw error;
      }
    }
    return undefined;
  }

  async function drain(): Promise<void> {
    if (claiming) {
      again = true;
      return;
    }
    claiming = true;
    try {
      do {
        again = false;
        while (!stopped && running.size < options.concurrency) {
          const turn = await claim();
          if (!turn) break;
          run(turn);
        }
      } while (again && !stopped);
    } catch (error) {
      options.log?.error({ err: error }, 'claiming a turn failed');
    } finally {
      claiming = false;
    }
  }

  function run(turn: TurnRow): void {
    const controller = new AbortController();
    running.set(turn.id, controller);
    const done = options
      .execute(turn, controller.signal)
      .catch((error) => options.log?.error({ err: error, turn_id: turn.id }, 'turn failed to settle'))
      .finally(() => {
        running.delete(turn.id);
        settled.delete(done);
        void drain();
      });
    settled.add(done);
  }

  async function beat(): Promise<void> {
    for (const [turnId, controller] of running) {
      try {
        const lease = await renewLease(options.store.db, turnId, owner, leaseUntil());
        if (!lease || lease.cancelRequested) controller.abort();
      } catch (error) {
        options.log?.error({ err: error, turn_id: turnId }, 'lease renewal failed');
      }
    }
  }

  async function sweep(): Promise<void> {
    try {
      for (const turn of await findExpiredRunningTurns(options.store.db, timestamp())) {
        if (!running.has(turn.id)) await options.settleExpired(turn);
      }
    } catch (error) {
      options.log?.error({ err: error }, 'sweeping expired leases failed');
    }
    await drain();
  }

  return {
    owner,
    start() {
      stopped = false;
      heartbeat = setInterval(() => void beat(), Math.max(50, Math.floor(options.leaseTtlMs / 3)));
      poller = setInterval(() => void sweep(), options.pollMs ?? 1000);
      heartbeat.unref();
      poller.unref();
      void sweep();
    },
    wake() {
      if (!stopped) void drain();
    },
    cancel(turnId) {
      const controller = running.get(turnId);
      controller?.abort();
      return controller !== undefined;
    },
    async stop() {
      stopped = true;
      clearInterval(heartbeat);
      clearInterval(poller);
      for (const controller of running.values()) controller.abort();
      await Promise.allSettled([...settled]);
    },
  };
}

function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string; message?: string };
  return (
    e?.code === '23505' ||
    e?.code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    /UNIQUE constraint/.test(e?.message ?? '')
  );
}
