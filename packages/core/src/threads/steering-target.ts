import { type Db, findActiveTurns, listQueuedInputs } from '@paddock/store';

/**
 * The running turn a new input may join (native steering): only while no other input waits for a
 * turn, so that inputs are always taken in the order they came.
 */
export async function steeringTarget(db: Db, threadId: string): Promise<string | undefined> {
  if ((await listQueuedInputs(db, threadId)).length > 0) return undefined;
  return (await findActiveTurns(db, threadId)).find((t) => t.status === 'running')?.id;
}
