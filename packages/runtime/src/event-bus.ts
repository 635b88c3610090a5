import type { ThreadEvent } from '@paddock/protocol';

export type EventListener = (event: ThreadEvent) => void;

/** Fans stored events out to live streams. In-process here; a cross-node bus implements the same seam. */
export interface EventBus {
  publish(event: ThreadEvent): void;
  subscribe(threadId: string, listener: EventListener): () => void;
}

export function createInProcessEventBus(): EventBus {
  const listeners = new Map<string, Set<EventListener>>();
  return {
    publish(event) {
      const set = listeners.get(event.thread_id);
      if (!set) return;
      for (const listener of set) listener(event);
    },
    subscribe(threadId, listener) {
      let set = listeners.get(threadId);
      if (!set) {
        set = new Set();
        listeners.set(threadId, set);
      }
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size === 0) listeners.delete(threadId);
      };
    },
  };
}
