import type { ThreadEvent } from '@paddock/protocol';
import { reachableThread } from '../auth/access.ts';
import { watchCredential } from '../auth/watch-credential.ts';
import type { Ctx, Services } from '../context.ts';

export interface EventStream {
  /** Events in seq order, replayed then live; ends when `close` is called. */
  events: AsyncIterable<ThreadEvent>;
  close(): void;
}

/**
 * A thread's event stream with resume (D6). It ends when the credential it was opened with is
 * revoked (see `watchCredential`). It subscribes before replaying, so nothing published
 * during the replay is lost, and it sends strictly by seq: a live event that skips ahead (another
 * node's, or one published out of order) makes it read the missing ones from the log first.
 */
export async function openEventStream(
  ctx: Ctx,
  services: Pick<Services, 'events' | 'revocations'>,
  {
    threadId,
    after,
  }: {
    threadId: string;
    /** Replay stored events after this seq; undefined means only new events. */
    after: number | undefined;
  },
): Promise<EventStream> {
  const pending: ThreadEvent[] = [];
  let wakeUp: (() => void) | undefined;
  let closed = false;
  // Subscribe first: whatever is published while the thread is read arrives here or is caught up.
  const unsubscribe = services.events.bus.subscribe(threadId, (event) => {
    pending.push(event);
    wakeUp?.();
  });
  let last: number;
  try {
    const thread = await reachableThread(ctx.store.db, ctx.actor, threadId);
    last = after ?? thread.last_seq;
  } catch (error) {
    unsubscribe();
    throw error;
  }
  const close = () => {
    closed = true;
    unsubscribe();
    stopWatching();
    wakeUp?.();
  };
  const stopWatching = watchCredential(ctx, services, close);

  async function* events(): AsyncGenerator<ThreadEvent> {
    try {
      if (after !== undefined) yield* catchUp();
      while (!closed) {
        if (pending.length === 0) {
          await new Promise<void>((resolve) => {
            wakeUp = resolve;
          });
          wakeUp = undefined;
          continue;
        }
        const event = pending.shift()!;
        if (event.seq <= last) continue;
        if (event.seq > last + 1) yield* catchUp();
        if (event.seq === last + 1) {
          last = event.seq;
          yield event;
        }
      }
    } finally {
      close();
    }
  }

  async function* catchUp(): AsyncGenerator<ThreadEvent> {
    for (;;) {
      const batch = await services.events.after(threadId, last, 500);
      for (const event of batch) {
        last = event.seq;
        yield event;
      }
      if (batch.length < 500) return;
    }
  }

  return { events: events(), close };
}
