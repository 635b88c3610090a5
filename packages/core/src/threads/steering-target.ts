import { type Db, listQueuedInputs, type TurnRow } from '@paddock/store';

/**
 * The running turn a new input may join (native steering): only while no other input waits for a
 * turn, so that inputs are always taken in the order they came. `active` is the thread's active
 * turns, read under its lock.
 */
export async function steeringTarget(
  db: Db,
  threadId: string,
  active: TurnRow[],
): Promise<string | undefined> {
  const running = active.find((t) => t.status === 'running');
  if (!running || (await listQueuedInputs(db, threadId)).length > 0) return undefined;
  return running.id;
}
