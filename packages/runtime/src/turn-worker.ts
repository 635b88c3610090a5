import { newId, timestamp } from '@paddock/protocol';
import {
  adoptTurn,
  findExpiredRunningTurns,
  findRunningTurnsOn,
  renewLease,
  type Store,
  type TurnRow,
} from '@paddock/store';
import { turnClaimer } from './turn-claim.ts';
import type { ServedTurnQueue, TurnQueue } from './turn-queue.ts';

export interface TurnWorkerOptions {
  store: Store;
  /** What the verbs, the executor and the runners' hubs ask of the worker: it serves it once made. */
  queue: ServedTurnQueue;
  /** Runs one claimed turn to its end; the signal aborts when the turn is cancelled or the worker stops. */
  execute(turn: TurnRow, signal: AbortSignal): Promise<void>;
  /** Follows a turn adopted from a detached runner to its end, as `execute` does a claimed one. */
  resume(turn: TurnRow, signal: AbortSignal): Promise<void>;
  /**
   * Settles a running turn whose lease expired without its owner finishing it, or (`ownerDied`) that
   * a dead predecessor of this node ran on the in-process runner.
   */
  settleExpired(turn: TurnRow, ownerDied: boolean): Promise<void>;
  /** Settles a running turn its detached runner reconnected without (see `TurnQueue.reconcile`). */
  settleLost(turn: TurnRow, runnerId: string): Promise<void>;
  leaseTtlMs: number;
  /**
   * The server node this worker runs on (one process per node at a time): its owner names it, so a
   * node that restarts after a crash settles the turns its dead predecessor ran on the in-process
   * runner at its first sweep, without waiting for their leases to expire.
   */
  node?: string;
  /**
   * The nodes share their machines (`machines`): a turn of a thread whose machine another live node
   * reaches is left to that node, which runs it where the thread's workspace is.
   */
  threadHomes?: boolean;
  /**
   * With `threadHomes`: whether this node takes the turns of threads no live node holds yet (it has
   * a runner for them, or no node has); checked at each claim. Taken by default.
   */
  takesNewThreads?: () => Promise<boolean>;
  /**
   * How long a turn on a detached runner whose lease expired waits to be adopted by a (restarted)
   * server before the sweep settles it. A turn on an in-process runner died with its server and is
   * settled as soon as its lease expires.
   */
  adoptionWindowMs: number;
  concurrency: number;
  /**
   * How many turns an organization may run at once, across every node on the database; undefined
   * means no limit. Its other turns wait in the queue.
   */
  runningTurnLimit?: (orgId: string) => number | undefined;
  /** Runs with every sweep, before claiming: queues turns for inputs left without one. */
  repair?: () => Promise<unknown>;
  /** How often to look for work another node queued and for expired leases. */
  pollMs?: number;
  log?: { error(obj: object, msg: string): void };
}

/**
 * The queue's worker: it takes adoptions (`TurnQueue.adopt`) from when it is made and claims queued
 * turns from `start`, which start-up calls once the server listens (a claimed turn's sandbox is
 * given the server's address).
 */
export interface TurnWorker extends TurnQueue {
  readonly owner: string;
  start(): void;
  /**
   * Stops claiming, aborts running turns with `workerStopping` and waits for them: the executor
   * settles those whose sandbox dies with this process and hands the others (on runners that
   * outlive it) to the next server.
   */
  stop(): Promise<void>;
}

/** The abort reason of the turns of a worker that is stopping (the server shuts down). */
export const workerStopping = Symbol('worker stopping');

/**
 * The abort reason of a turn this worker stops following without ending it: its lease went to
 * another server.
 */
export const turnHandedOff = Symbol('turn handed off');

/**
 * The durable turn queue's consumer: claims queued turns under a lease, renews the lease with a
 * heartbeat at a third of its TTL, and notices a cancel requested on another node at each beat.
 */
export function createTurnWorker(options: TurnWorkerOptions): TurnWorker {
  const owner = options.node ? `node:${options.node}/worker-${newId()}` : `worker-${newId()}`;
  const running = new Map<string, AbortController>();
  const settled = new Set<Promise<void>>();
  /** Not claiming: before `start`, and after `stop`. */
  let stopped = true;
  /** `stop` was called: no turn is adopted any more. */
  let ended = false;
  let claiming = false;
  /**
   * Why to claim: wakes not yet answered (each says this process may have queued a turn: one claimed
   * answers one, one that finds none answers all before it), and sweeps (claim until none is left:
   * turns another node queued, or that waited for a limit). Nothing asked, nothing is read.
   */
  let wakes = 0;
  let sweeps = 0;
  /**
   * Threads this process queued a turn for, woken by name: their turn is claimed by the thread's own
   * index, not by a search of every queued turn. Only where nothing else decides which turn may run
   * (no organization's limit, no thread homes); a wake by name is a plain wake otherwise.
   */
  const woken: string[] = [];
  const byName = !options.runningTurnLimit && !(options.threadHomes && options.node);
  let poller: NodeJS.Timeout | undefined;
  let heartbeat: NodeJS.Timeout | undefined;

  const leaseUntil = () => timestamp(new Date(Date.now() + options.leaseTtlMs));

  const claim = turnClaimer(options, owner, leaseUntil);

  async function drain(): Promise<void> {
    // A drain under way sees what is asked meanwhile before it stops.
    if (claiming) return;
    claiming = true;
    try {
      while (!stopped && running.size < options.concurrency && woken.length + wakes + sweeps > 0) {
        const threadId = woken.shift();
        if (threadId !== undefined) {
          const turn = await claim(threadId);
          if (turn) run(turn);
          continue;
        }
        const [wakesAsked, sweepsAsked] = [wakes, sweeps];
        const turn = await claim();
        if (!turn) {
          wakes -= wakesAsked;
          sweeps -= sweepsAsked;
          continue;
        }
        if (wakes > 0) wakes -= 1;
        run(turn);
      }
    } catch (error) {
      options.log?.error({ err: error }, 'claiming a turn failed');
    } finally {
      claiming = false;
    }
  }

  function run(turn: TurnRow, execute = options.execute): void {
    const controller = new AbortController();
    running.set(turn.id, controller);
    const done = execute(turn, controller.signal)
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
        if (!lease) controller.abort(turnHandedOff);
        else if (lease.cancelRequested) controller.abort();
      } catch (error) {
        options.log?.error({ err: error, turn_id: turnId }, 'lease renewal failed');
      }
    }
  }

  async function sweep(): Promise<void> {
    try {
      await options.repair?.();
    } catch (error) {
      options.log?.error({ err: error }, 'queuing turns for stranded inputs failed');
    }
    try {
      const now = Date.now();
      const predecessors = options.node ? { prefix: `node:${options.node}/`, except: owner } : undefined;
      const expired = await findExpiredRunningTurns(options.store.db, {
        now: timestamp(new Date(now)),
        adoptionCutoff: timestamp(new Date(now - options.adoptionWindowMs)),
        predecessors,
      });
      for (const turn of expired) {
        const ownerDied =
          predecessors !== undefined &&
          turn.runner_id === null &&
          turn.lease_owner !== owner &&
          (turn.lease_owner?.startsWith(predecessors.prefix) ?? false);
        if (!running.has(turn.id)) await options.settleExpired(turn, ownerDied);
      }
    } catch (error) {
      options.log?.error({ err: error }, 'sweeping expired leases failed');
    }
    sweeps += 1;
    await drain();
  }

  const worker: TurnWorker = {
    owner,
    start() {
      stopped = false;
      heartbeat = setInterval(() => void beat(), Math.max(50, Math.floor(options.leaseTtlMs / 3)));
      poller = setInterval(() => void sweep(), options.pollMs ?? 1000);
      heartbeat.unref();
      poller.unref();
      void sweep();
    },
    wake(threadId) {
      // On the next turn of the event loop: whoever woke it (a request that stored an input) is
      // answered first, rather than after the turn's synchronous store work that the claim starts.
      if (stopped) return;
      if (threadId !== undefined && byName) woken.push(threadId);
      else wakes += 1;
      setImmediate(() => void drain());
    },
    cancel(turnId) {
      const controller = running.get(turnId);
      controller?.abort();
      return controller !== undefined;
    },
    async adopt(turnId, runnerId) {
      if (ended || running.has(turnId)) return running.has(turnId);
      const turn = await adoptTurn(options.store.db, turnId, { owner, expiresAt: leaseUntil(), runnerId });
      if (!turn) return false;
      run(turn, options.resume);
      return true;
    },
    async reconcile(runnerId, held) {
      for (const turn of await findRunningTurnsOn(options.store.db, runnerId)) {
        if (!held.has(turn.id) && !running.has(turn.id)) await options.settleLost(turn, runnerId);
      }
    },
    async stop() {
      stopped = true;
      ended = true;
      clearInterval(heartbeat);
      clearInterval(poller);
      for (const controller of running.values()) controller.abort(workerStopping);
      await Promise.allSettled([...settled]);
    },
  };
  options.queue.serve(worker);
  return worker;
}
