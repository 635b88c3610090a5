import type { DraftEvent } from '@paddock/protocol';
import type { EventLog } from '@paddock/runtime';

/**
 * Stores one turn's events in the order they were emitted, in batches: while a write is under way,
 * the events emitted meanwhile gather, and the next write stores them all in one transaction (their
 * seqs allocated together, so still gapless), with the last one's runner index as the turn's
 * cursor. A stream of chunks costs a transaction per round trip to the database, not one per chunk.
 * Each write's promise settles once its own event is stored (or its batch failed: `onError` is told,
 * and the events after it are still written); `flushed` once every event written so far is.
 */
export function turnEventWriter(
  events: Pick<EventLog, 'append'>,
  threadId: string,
  turnId: string,
  onError: (error: unknown) => void,
): { write(event: DraftEvent, index?: number): Promise<void>; flushed(): Promise<void> } {
  let pending: { drafts: DraftEvent[]; cursor: number | undefined; stored: Promise<void> } | undefined;
  let writing: Promise<void> = Promise.resolve();

  function write(event: DraftEvent, index?: number): Promise<void> {
    if (!pending) {
      const batch = {
        drafts: [] as DraftEvent[],
        cursor: undefined as number | undefined,
        stored: Promise.resolve(),
      };
      // Starts once the write before it is done; whatever is emitted until then joins it.
      batch.stored = writing.then(async () => {
        if (pending === batch) pending = undefined;
        try {
          await events.append(threadId, turnId, batch.drafts, batch.cursor);
        } catch (error) {
          onError(error);
        }
      });
      writing = batch.stored;
      pending = batch;
    }
    pending.drafts.push(event);
    if (index !== undefined) pending.cursor = index;
    return pending.stored;
  }
  // The last batch started settles after every one before it.
  return { write, flushed: () => writing };
}
