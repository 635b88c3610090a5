import type { InputReceipt } from '@paddock/protocol';
import { findActiveTurns, findInput, listInputs } from '@paddock/store';
import { reachableThread } from '../auth/access.ts';
import type { Ctx } from '../context.ts';
import { PaddockError } from '../errors.ts';
import { toReceipt } from '../threads/input-receipt.ts';

/** `GET /v2/tasks/{id}/inputs` (D11): the input stream with the current generation and active turn. */
export async function listTaskInputs(
  ctx: Ctx,
  { taskId }: { taskId: string },
): Promise<{
  generation: number;
  active_turn_id: string | null;
  items: InputReceipt[];
}> {
  const thread = await reachableThread(ctx.store.db, ctx.actor, taskId);
  const [inputs, active] = await Promise.all([
    listInputs(ctx.store.db, taskId),
    findActiveTurns(ctx.store.db, taskId),
  ]);
  return {
    generation: thread.generation,
    active_turn_id: active.find((t) => t.status === 'running')?.id ?? null,
    items: inputs.map(toReceipt),
  };
}

export async function getTaskInput(
  ctx: Ctx,
  { taskId, inputId }: { taskId: string; inputId: string },
): Promise<InputReceipt> {
  await reachableThread(ctx.store.db, ctx.actor, taskId);
  const input = await findInput(ctx.store.db, inputId);
  if (input?.thread_id !== taskId) throw new PaddockError('input_not_found', 'Input not found');
  return toReceipt(input);
}
