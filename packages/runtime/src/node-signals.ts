import { newId } from '@paddock/protocol';
import { notifyAll, type Store } from '@paddock/store';
import type { PgListener } from './pg-listener.ts';

/** What one server node tells the others at once, rather than leaving them to find it at their next poll. */
export type NodeSignal =
  /** A Stop cancelled this turn, which the node that runs it aborts. */
  | { kind: 'cancel_turn'; turn_id: string }
  /** A credential was revoked: every open event stream re-checks its own. */
  | { kind: 'revoked' };

/**
 * Signals between the server nodes on one database. `send` reaches every other node (never this
 * one: the sender acts on its own signals itself) and is best-effort: each signal only hastens what
 * the nodes would find anyway (a turn's cancel flag at its next heartbeat, a revoked credential at the
 * stream's next re-check). One node alone (SQLite) sends nothing.
 */
export interface NodeSignals {
  send(signal: NodeSignal): void;
  on(listener: (signal: NodeSignal) => void): () => void;
}

const channel = 'paddock_signals';

export function createLocalNodeSignals(): NodeSignals {
  return { send: () => {}, on: () => () => {} };
}

export function createPostgresNodeSignals(options: {
  store: Store;
  listener: PgListener;
  log?: { warn(obj: object, msg: string): void };
}): NodeSignals {
  const origin = newId();
  const listeners = new Set<(signal: NodeSignal) => void>();
  options.listener.on(channel, {
    message(payload) {
      let parsed: { n: string; s: NodeSignal };
      try {
        parsed = JSON.parse(payload) as { n: string; s: NodeSignal };
      } catch {
        return;
      }
      if (parsed.n === origin) return;
      for (const listener of listeners) listener(parsed.s);
    },
  });
  return {
    send(signal) {
      void notifyAll(options.store.db, channel, [JSON.stringify({ n: origin, s: signal })]).catch((error) =>
        options.log?.warn({ err: error, signal: signal.kind }, 'signalling the other nodes failed'),
      );
    },
    on(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/** The channel `createPostgresNodeSignals` needs its listener to listen on. */
export const nodeSignalChannel = channel;
