import type { NodeSignals } from './node-signals.ts';

/**
 * What the rest of the server asks of the turn worker: verbs and the turn executor wake it when they
 * queue a turn, a Stop cancels a turn it runs, the runners' hubs offer it the turns a reconnecting
 * runner holds. Made first and handed to each of them and to the worker, which serves it from when it
 * is made (`serve`): so the executor and the hubs are built without a worker, and the worker after
 * them. Start-up makes the worker before the server listens, so nothing asks an unserved queue.
 */
export interface TurnQueue {
  /**
   * Looks for queued turns now (called after a turn is enqueued in this process); with the thread
   * whose turn was queued, looks for that one.
   */
  wake(threadId?: string): void;
  /** Aborts a turn the worker runs; answers whether it was running here. */
  cancel(turnId: string): boolean;
  /**
   * Takes over a running turn a detached runner still holds (its server restarted): the lease
   * becomes this worker's and it follows the turn to its end. False if the turn is over.
   */
  adopt(turnId: string, runnerId: string): Promise<boolean>;
  /**
   * A detached runner (re)connected holding only `held`: its other running turns, unless the worker
   * follows them, can never finish, and are settled now rather than after the adoption window.
   */
  reconcile(runnerId: string, held: ReadonlySet<string>): Promise<void>;
}

/** The queue as the worker takes it: the worker serves every request from then on. */
export interface ServedTurnQueue extends TurnQueue {
  serve(worker: TurnQueue): void;
}

/**
 * With `signals`, a cancel for a turn this node does not run is sent to the other nodes, and the one
 * running it aborts it at once (not at its next heartbeat, which reads the turn's cancel flag).
 */
export function createTurnQueue(signals?: NodeSignals): ServedTurnQueue {
  let worker: TurnQueue | undefined;
  signals?.on((signal) => {
    if (signal.kind === 'cancel_turn') worker?.cancel(signal.turn_id);
  });
  return {
    wake: (threadId) => worker?.wake(threadId),
    cancel: (turnId) => {
      if (worker?.cancel(turnId)) return true;
      signals?.send({ kind: 'cancel_turn', turn_id: turnId });
      return false;
    },
    adopt: async (turnId, runnerId) => (await worker?.adopt(turnId, runnerId)) ?? false,
    reconcile: async (runnerId, held) => worker?.reconcile(runnerId, held),
    serve(next) {
      if (worker) throw new Error('the turn queue is served by another worker');
      worker = next;
    },
  };
}
