import { timestamp } from '@paddock/protocol';
import { findActiveTurns, findStrandedInputThreads, lockThread } from '@paddock/store';
import type { Services } from '../context.ts';
import { updateThreadStatus } from '../threads/thread-status.ts';
import { queueTurnForWaitingInputs } from './end-turn.ts';

/**
 * The repair the worker runs with every sweep: a thread whose inputs wait for a turn that nothing
 * queued (left by a version whose turn ends did not queue the next one) gets its turn. Every
 * current path queues it with the turn's end, so this finds nothing on data written since.
 */
export async function queueStrandedInputs({ store, log }: Pick<Services, 'store' | 'log'>): Promise<number> {
  let queued = 0;
  for (const threadId of await findStrandedInputThreads(store.db)) {
    const repaired = await store.transaction(async (trx) => {
      const at = timestamp();
      const thread = await lockThread(trx, threadId, at);
      // Checked again under the lock: a turn may have been queued since the search.
      if (!thread || (await findActiveTurns(trx, threadId)).length > 0) return false;
      if (!(await queueTurnForWaitingInputs(trx, thread, at))) return false;
      await updateThreadStatus(trx, thread, { on: 'turn_active' });
      return true;
    });
    if (repaired) {
      queued++;
      log.warn({ thread_id: threadId }, 'queued a turn for inputs left without one');
    }
  }
  return queued;
}
