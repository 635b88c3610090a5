import { type Db, findActiveTurns, findInput, releaseClaimedInput, type ThreadRow } from '@paddock/store';
import { ensureQueuedTurn } from './queue-input.ts';
import { updateThreadStatus } from './thread-status.ts';

/**
 * An input claimed for steering into `turnId` that the turn did not take: back to the queue with a
 * next turn to take it, or cancelled when a Stop advanced the generation since. Nothing happens
 * when the turn no longer holds it (whoever noticed first gave it back).
 */
export async function giveBackInput(
  trx: Db,
  thread: ThreadRow,
  inputId: string,
  turnId: string,
  at: string,
): Promise<void> {
  const input = await findInput(trx, inputId);
  if (!input) return;
  const stale = thread.generation > input.generation;
  const released = await releaseClaimedInput(trx, inputId, turnId, stale ? 'cancelled' : 'queued', at);
  if (!released || stale) return;
  const running = (await findActiveTurns(trx, thread.id)).some((t) => t.status === 'running');
  await ensureQueuedTurn(trx, thread, at);
  if (!running) await updateThreadStatus(trx, thread, { on: 'turn_active' });
}
