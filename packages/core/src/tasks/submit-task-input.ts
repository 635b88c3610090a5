import { type SubmitTaskInputBody, type SubmitTaskInputResponse, timestamp } from '@paddock/protocol';
import { findActiveTurns, findInput, type InputRow, lockThread, updateThread } from '@paddock/store';
import { reachableThread, requireScope } from '../auth/access.ts';
import type { Ctx } from '../context.ts';
import { PaddockError, threadNotFound } from '../errors.ts';
import { admitThreadSandbox } from '../machines/live-sandboxes.ts';
import { requireMachineAlive } from '../machines/machine-lifecycle.ts';
import { inputMessages, toReceipt } from '../threads/input-receipt.ts';
import { ensureQueuedTurn, queueInput, refuseWhileAwaitingAdoption } from '../threads/queue-input.ts';
import { requireInService } from '../threads/recovery.ts';
import { steeringTarget } from '../threads/steering-target.ts';

/**
 * `POST /v2/tasks/{id}/inputs`: a durable receipt before the 201. A retry with the same `input_id`
 * and messages answers the existing receipt (`replayed`) and delivers nothing again; the thread
 * row lock makes concurrent retries line up, so exactly one of them inserts.
 */
export async function submitTaskInput({
  ctx,
  taskId,
  input,
}: {
  ctx: Ctx;
  taskId: string;
  input: SubmitTaskInputBody;
}): Promise<{ response: SubmitTaskInputResponse; replayed: boolean }> {
  requireScope(ctx.actor, 'publish');
  await reachableThread(ctx.store.db, ctx.actor, taskId);
  const messages = input.messages.map((m) => ({ role: m.role, content: m.content }));
  const answer = await ctx.store.transaction(async (trx) => {
    const at = timestamp();
    const thread = await lockThread(trx, taskId, at);
    if (!thread) throw threadNotFound();
    requireInService(thread);
    const existing = await findInput(trx, input.input_id);
    if (existing) {
      if (existing.thread_id !== taskId || !sameMessages(existing, messages)) {
        throw new PaddockError('idempotency_key_reused', 'input_id was already used with other messages');
      }
      const queuedTurn = (await findActiveTurns(trx, taskId)).find((t) => t.status === 'queued');
      const accepted = existing.turn_id ?? (existing.status === 'queued' ? (queuedTurn?.id ?? null) : null);
      return { row: existing, runStarted: false, accepted, replayed: true, steerInto: undefined };
    }
    // After the replay: an input accepted before the sandbox's end still answers its receipt.
    requireMachineAlive(thread);
    const generation = input.expected_generation ?? thread.generation;
    if (generation < thread.generation) {
      throw new PaddockError(
        'input_generation_stale',
        `expected_generation ${generation} is older than the task's generation ${thread.generation}: a Stop came in between`,
      );
    }
    if (generation > thread.generation) {
      throw new PaddockError(
        'invalid_input_generation',
        `expected_generation ${generation} is ahead of the task's generation ${thread.generation}`,
      );
    }
    const active = await findActiveTurns(trx, taskId);
    refuseWhileAwaitingAdoption(active, at);
    const target = ctx.steering ? await steeringTarget(trx, taskId) : undefined;
    const busy = active.length > 0;
    if (!busy) await admitThreadSandbox(trx, ctx.sandboxLimits, thread);
    const { input: row } = await queueInput(trx, thread, messages, at, {
      run: true,
      inputId: input.input_id,
    });
    if (target) return { row, runStarted: false, accepted: target, replayed: false, steerInto: target };
    const accepted = await ensureQueuedTurn(trx, thread, at);
    if (!busy) await updateThread(trx, taskId, { status: 'running' });
    return { row, runStarted: !busy, accepted, replayed: false };
  });
  if (answer.runStarted) ctx.worker?.wake();
  if ('steerInto' in answer && answer.steerInto) {
    // The 201 acknowledges the durable receipt; delivery into the turn happens after it.
    void ctx.steering
      ?.deliver(taskId, answer.steerInto, answer.row.id)
      .catch((err) => ctx.log.error({ err, thread_id: taskId }, 'steering an input failed'));
  }
  return {
    replayed: answer.replayed,
    response: {
      input: toReceipt(answer.row),
      messages: inputMessages(answer.row).map((m) => ({
        ...m,
        task_id: taskId,
        created_at: answer.row.created_at,
      })),
      run_started: answer.runStarted,
      accepted_turn_id: answer.accepted,
    },
  };
}

function sameMessages(input: InputRow, messages: { role: string; content: string }[]): boolean {
  const stored = inputMessages(input);
  return (
    stored.length === messages.length &&
    stored.every((m, i) => m.role === messages[i]!.role && m.content === messages[i]!.content)
  );
}
