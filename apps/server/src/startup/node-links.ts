import {
  createInProcessEventBus,
  createLocalNodeSignals,
  createPgListener,
  createPostgresEventBus,
  createPostgresNodeSignals,
  type EventBus,
  eventBusChannel,
  type NodeSignals,
  nodeSignalChannel,
} from '@paddock/runtime';
import { createListenClient, type Store } from '@paddock/store';
import type { Logger } from 'pino';

/** What ties this node to the others on its database: their events, and their signals. */
export interface NodeLinks {
  bus: EventBus;
  signals: NodeSignals;
  close(): Promise<void>;
}

/**
 * On PostgreSQL, several nodes may share the database: the event bus carries every thread's events
 * across them, and the signals a Stop's cancel and a revocation, both over LISTEN/NOTIFY on one
 * connection of the node's own. SQLite serves one node: its bus is in process, and it signals nobody.
 */
export function createNodeLinks(store: Store, databaseUrl: string | undefined, logger: Logger): NodeLinks {
  if (store.dialect !== 'postgres' || databaseUrl === undefined)
    return { bus: createInProcessEventBus(), signals: createLocalNodeSignals(), close: async () => {} };
  const listener = createPgListener({
    listenClient: () => createListenClient(databaseUrl),
    channels: [eventBusChannel, nodeSignalChannel],
    log: logger,
  });
  const bus = createPostgresEventBus({ store, listener, log: logger });
  return {
    bus,
    signals: createPostgresNodeSignals({ store, listener, log: logger }),
    async close() {
      await bus.close();
      await listener.close();
    },
  };
}
