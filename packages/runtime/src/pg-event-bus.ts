import { newId, type ThreadEvent } from '@paddock/protocol';
import { findThread, listEventsAfter, notifyAll, type Store } from '@paddock/store';
import type { EventBus, EventListener } from './event-bus.ts';
import { toThreadEvent } from './event-log.ts';
import type { PgListener } from './pg-listener.ts';

export interface PostgresEventBusOptions {
  /** The store on PostgreSQL: notifications are sent on its pool, missed events read from its log. */
  store: Store;
  /** The node's LISTEN connection, listening on `eventBusChannel`; its owner closes it. */
  listener: PgListener;
  log?: { warn(obj: object, msg: string): void };
  /** First wait before retrying a failed read or notify; doubles up to `maxRetryMs`. */
  retryMs?: number;
  maxRetryMs?: number;
}

export interface PostgresEventBus extends EventBus {
  /** Sends what is pending and stops hearing other nodes (the listener and the store stay open). */
  close(): Promise<void>;
}

const channel = 'paddock_events';
/** The channel the bus's listener must listen on. */
export const eventBusChannel = channel;
const readBatch = 500;

/** What this node knows of one thread that has subscribers here. */
interface Followed {
  listeners: Set<EventListener>;
  /** The newest seq delivered here; undefined until the first delivery. */
  delivered?: number;
  /**
   * Until something is delivered, where reads start: the thread's last seq when it was first
   * subscribed here (read then), or before the first seq of a notification that came sooner.
   */
  from?: number;
  reading: boolean;
  again: boolean;
}

/** The notification: who sent it, and the seqs `f`..`s` of thread `t` it stands for. */
interface Signal {
  n: string;
  t: string;
  f: number;
  s: number;
}

/**
 * An event bus across server nodes on one PostgreSQL database. A node delivers its own events to its
 * subscribers at once and sends a small NOTIFY (its id, the thread, the seqs) per thread per tick; a
 * node that hears of another's events for a thread it follows reads them from the event log, after
 * the newest seq it delivered, and delivers them in order. Reads of a thread run one at a time and
 * signals during a read make one more read. It hears other nodes through the node's LISTEN connection
 * (`PgListener`) and, when that connection comes back after a drop, catches up every thread it
 * follows (notifications are lost while it is away).
 */
export function createPostgresEventBus(options: PostgresEventBusOptions): PostgresEventBus {
  const { store, log } = options;
  const retryMs = options.retryMs ?? 100;
  const maxRetryMs = options.maxRetryMs ?? 5_000;
  const origin = newId();
  const threads = new Map<string, Followed>();
  const work = new Set<Promise<unknown>>();
  const timers = new Set<NodeJS.Timeout>();
  let closed = false;

  const later = (ms: number, fn: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!closed) fn();
    }, ms);
    timer.unref();
    timers.add(timer);
  };
  const track = <T>(promise: Promise<T>) => {
    work.add(promise);
    void promise.finally(() => work.delete(promise));
    return promise;
  };

  function deliver(followed: Followed, event: ThreadEvent): void {
    followed.delivered = event.seq;
    for (const listener of followed.listeners) listener(event);
  }

  // Reads of one thread, one at a time: a request during a read makes it read once more.
  function read(threadId: string, followed: Followed): void {
    if (closed || threads.get(threadId) !== followed) return;
    if (followed.reading) {
      followed.again = true;
      return;
    }
    followed.reading = true;
    void track(readLoop(threadId, followed));
  }

  async function readLoop(threadId: string, followed: Followed, failures = 0): Promise<void> {
    let retrying = false;
    try {
      do {
        followed.again = false;
        let after = followed.delivered ?? followed.from;
        if (after === undefined) return;
        for (;;) {
          const rows = await listEventsAfter(store.db, threadId, after, readBatch);
          if (closed || threads.get(threadId) !== followed) return;
          for (const row of rows)
            if (followed.delivered === undefined || row.seq > followed.delivered)
              deliver(followed, toThreadEvent(row));
          if (rows.length < readBatch) break;
          after = rows.at(-1)!.seq;
        }
      } while (followed.again);
    } catch (error) {
      if (closed) return;
      log?.warn({ err: error, thread_id: threadId }, 'reading events another node stored failed; retrying');
      retrying = true;
      later(Math.min(maxRetryMs, retryMs * 2 ** failures), () => {
        void track(readLoop(threadId, followed, failures + 1));
      });
    } finally {
      if (!retrying) followed.reading = false;
    }
  }

  function onNotification(payload: string): void {
    let signal: Signal;
    try {
      signal = JSON.parse(payload) as Signal;
    } catch {
      return;
    }
    if (signal.n === origin) return;
    const followed = threads.get(signal.t);
    if (!followed) return;
    if (followed.delivered !== undefined) {
      if (signal.s <= followed.delivered) return;
    } else followed.from = Math.min(followed.from ?? signal.f - 1, signal.f - 1);
    read(signal.t, followed);
  }

  // Notifications: the newest range per thread, sent once per tick, one statement at a time.
  const pending = new Map<string, { f: number; s: number }>();
  let scheduled = false;
  let sending: Promise<void> | undefined;
  let notifyFailures = 0;

  function merge(threadId: string, f: number, s: number): void {
    const range = pending.get(threadId);
    if (range) {
      range.f = Math.min(range.f, f);
      range.s = Math.max(range.s, s);
    } else pending.set(threadId, { f, s });
  }

  function queueNotify(threadId: string, seq: number): void {
    merge(threadId, seq, seq);
    if (!scheduled && !sending && !closed) {
      scheduled = true;
      setImmediate(() => {
        scheduled = false;
        flush();
      });
    }
  }

  function flush(): void {
    if (sending || pending.size === 0) return;
    const batch = [...pending];
    pending.clear();
    const payloads = batch.map(([t, { f, s }]) => JSON.stringify({ n: origin, t, f, s } satisfies Signal));
    sending = track(
      notifyAll(store.db, channel, payloads).then(
        () => {
          notifyFailures = 0;
          sending = undefined;
          flush();
        },
        (error: unknown) => {
          sending = undefined;
          for (const [threadId, range] of batch) merge(threadId, range.f, range.s);
          if (closed) return;
          log?.warn({ err: error }, 'notifying other nodes of new events failed; retrying');
          later(Math.min(maxRetryMs, retryMs * 2 ** notifyFailures++), flush);
        },
      ),
    );
  }

  const unlisten = options.listener.on(channel, {
    message: onNotification,
    // Whatever was stored while the node was not listening is caught up from the log.
    resumed() {
      for (const [threadId, followed] of threads) read(threadId, followed);
    },
  });

  return {
    publish(event) {
      const followed = threads.get(event.thread_id);
      if (followed) {
        const after = followed.delivered ?? followed.from;
        // An event that skips ahead waits for a read of the ones before it (another node's, or
        // published out of order here); one at or below what was delivered was delivered already.
        if (after === undefined || event.seq === after + 1) deliver(followed, event);
        else if (event.seq > after + 1) read(event.thread_id, followed);
      }
      if (!closed) queueNotify(event.thread_id, event.seq);
    },
    subscribe(threadId, listener) {
      let followed = threads.get(threadId);
      if (!followed) {
        const fresh: Followed = { listeners: new Set(), reading: false, again: false };
        threads.set(threadId, fresh);
        void track(
          findThread(store.db, threadId).then(
            (row) => {
              if (row && fresh.delivered === undefined)
                fresh.from = Math.min(fresh.from ?? row.last_seq, row.last_seq);
            },
            () => undefined,
          ),
        );
        followed = fresh;
      }
      const mine = followed;
      mine.listeners.add(listener);
      return () => {
        mine.listeners.delete(listener);
        if (mine.listeners.size === 0 && threads.get(threadId) === mine) threads.delete(threadId);
      };
    },
    async close() {
      if (closed) return;
      await sending;
      flush();
      closed = true;
      unlisten();
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      await Promise.allSettled([...work]);
      threads.clear();
    },
  };
}
