/**
 * How an open event stream learns that its credential was revoked. A revocation made in this
 * process is signalled at once (every stream re-checks its own credential); one made on another
 * node is seen by the periodic re-check every `recheckMs`.
 */
export interface Revocations {
  readonly recheckMs: number;
  /** A credential was revoked here: every open stream re-checks now. */
  revoked(): void;
  onRevoked(listener: () => void): () => void;
}

export function createRevocations(recheckMs: number): Revocations {
  const listeners = new Set<() => void>();
  return {
    recheckMs,
    revoked() {
      for (const listener of listeners) listener();
    },
    onRevoked(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
