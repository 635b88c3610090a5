import type { NodeSignals } from '@paddock/runtime';

/**
 * How an open event stream learns that its credential was revoked. A revocation made in this
 * process is signalled at once (every stream re-checks its own credential), and so is one made on
 * another node when the nodes signal each other (`signals`, on PostgreSQL); the periodic re-check
 * every `recheckMs` catches whatever a lost signal missed.
 */
export interface Revocations {
  readonly recheckMs: number;
  /** A credential was revoked here: every open stream re-checks now. */
  revoked(): void;
  onRevoked(listener: () => void): () => void;
}

export function createRevocations(recheckMs: number, signals?: NodeSignals): Revocations {
  const listeners = new Set<() => void>();
  const recheck = () => {
    for (const listener of listeners) listener();
  };
  signals?.on((signal) => {
    if (signal.kind === 'revoked') recheck();
  });
  return {
    recheckMs,
    revoked() {
      recheck();
      signals?.send({ kind: 'revoked' });
    },
    onRevoked(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
