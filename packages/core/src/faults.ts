/**
 * Test-only hooks that hold or bend the service at points a test cannot reach through HTTP alone.
 * Production wiring sets none (`noFaults`); every call site treats an absent hook as "carry on".
 */
export interface Faults {
  /** Awaited after a turn is marked `finalizing` and before its settle transaction runs. */
  beforeSettle?(turnId: string): Promise<void>;
  /** Overrides what the sandbox host reports about interrupting the thread's turns safely. */
  canInterrupt?(threadId: string): boolean;
}

/** The faults of production: none. */
export const noFaults: Faults = Object.freeze({});
