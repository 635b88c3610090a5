import { setTimeout as sleep } from 'node:timers/promises';
import { type TaskRecord, type ThreadStatus, timestamp } from '@paddock/protocol';
import {
  type AgentRow,
  cancelInputs,
  type Db,
  findActiveTurns,
  findAgent,
  findLiveSandbox,
  isStoreFailure,
  listCancelledInputs,
  listQueuedInputs,
  lockThread,
  requestCancel,
  type ThreadRow,
  type TurnRow,
  updateThread,
} from '@paddock/store';
import { reachableThread } from '../auth/access.ts';
import type { Ctx, Services } from '../context.ts';
import { PaddockError, threadNotFound } from '../errors.ts';
import { endTurn } from '../turns/end-turn.ts';
import { isAdoptingHost, placeThread } from '../turns/sandbox-host.ts';
import { toReceipt } from './input-receipt.ts';
import { awaitingAdoption } from './queue-input.ts';
import { requireInService } from './recovery.ts';
import { updateThreadStatus } from './thread-status.ts';

/** How long a Stop waits for steering deliveries under way (an interrupted turn ends within ~5 s). */
const deliveryWaitMs = 6_000;

/**
 * Stop: cancels the running turn and the pending inputs of the current generation, then advances
 * the generation. A retry with the same `expected_generation` answers the same record and cancels
 * nothing newer.
 */
export async function interruptThread(
  ctx: Ctx,
  services: Pick<Services, 'sandboxes' | 'turnQueue' | 'steering'>,
  { threadId, expectedGeneration }: { threadId: string; expectedGeneration?: number },
): Promise<TaskRecord> {
  /** `fresh`: this request took effect (not the replay of an earlier Stop). */
  let answer: { record: TaskRecord; runningTurnId: string | undefined; fresh: boolean };
  try {
    await reachableThread(ctx.store.db, ctx.actor, threadId);
    answer = await ctx.store.transaction(async (trx) => {
      const at = timestamp(new Date(ctx.clock.now()));
      const thread = await lockThread(trx, threadId, at);
      if (!thread) throw threadNotFound();
      requireInService(thread);
      const agent = (await findAgent(trx, thread.agent_id))!;
      // An orphan's interrupt goes to the host the thread's sandbox is on (a self-hosted runner's).
      placeThread(services.sandboxes, threadId, agent);
      const generation = expectedGeneration ?? thread.generation;
      if (generation > thread.generation) {
        throw new PaddockError(
          'invalid_input_generation',
          `expected_generation ${generation} is ahead of the task's generation ${thread.generation}`,
        );
      }
      if (generation < thread.generation) {
        // A retry of a Stop that already took effect: answer what it cancelled then.
        return {
          record: await taskRecord(trx, thread, agent, generation + 1, generation, at),
          runningTurnId: undefined,
          fresh: false,
        };
      }
      const active = await findActiveTurns(trx, threadId);
      if (awaitingAdoption(active, at)) {
        // Nobody holds the running turn's lease (its server died; a detached runner may still run it
        // until a restarted server adopts it): no one here can interrupt it or confirm it stopped.
        throw new PaddockError(
          'turn_interrupt_recovery_required',
          'the running turn is outside any live lease (awaiting adoption after a control-plane restart); nothing was cancelled',
        );
      }
      // Checked before any cancellation, so a refused Stop changes nothing.
      requireInterruptible(active.find((t) => t.status === 'running'));
      const pending = await listQueuedInputs(trx, threadId);
      await cancelInputs(
        trx,
        pending.map((i) => i.id),
        'interrupted',
        at,
      );
      // The inputs are cancelled first, so ending the queued turn leaves none waiting for a next one.
      const running = active.find((t) => t.status === 'running');
      if (running) await requestCancel(trx, running.id);
      for (const turn of active.filter((t) => t.status === 'queued')) {
        await endTurn(trx, thread, turn.id, { stopReason: 'cancelled' }, at);
      }
      const runningTurnId = running?.id;
      await updateThread(trx, threadId, { generation: thread.generation + 1 });
      const status = await updateThreadStatus(trx, thread, {
        on: 'stop',
        turnRunning: running !== undefined,
      });
      const updated = { ...thread, generation: thread.generation + 1, status };
      const record = await taskRecord(trx, updated, agent, updated.generation, generation, at);
      return { record, runningTurnId, fresh: true };
    });
  } catch (error) {
    // Only the database failing, before or after the cancellations, leaves the Stop unconfirmed
    // (spec: Stop errors); anything else is a fault here, answered 500 with its stack logged.
    if (!isStoreFailure(error)) throw error;
    ctx.log.error({ err: error, thread_id: threadId }, 'stop could not be confirmed');
    throw new PaddockError(
      'turn_interrupt_unconfirmed',
      'the Stop could not be confirmed; retry the same request',
      {
        retryAfter: 1,
      },
    );
  }
  const { record, runningTurnId, fresh } = answer;
  if (runningTurnId) services.turnQueue.cancel(runningTurnId);
  // No turn of the thread runs as far as the store knows: one a restart left running in its sandbox
  // past the adoption window is stopped now, so the thread can take new turns.
  else if (fresh && isAdoptingHost(services.sandboxes)) services.sandboxes.interruptOrphan(threadId);
  if (!fresh) return record;
  // Inputs on their way into the interrupted turn end either taken by it or cancelled; the answer
  // waits for that, so every input of the generation is in it or in the transcript, never both.
  const waited = await Promise.race([
    services.steering.deliveriesSettled(threadId),
    sleep(deliveryWaitMs, false, { ref: false }),
  ]);
  if (!waited) return record;
  const cancelled = await listCancelledInputs(ctx.store.db, threadId, record.generation - 1);
  return { ...record, cancelled_inputs: cancelled.map(toReceipt) };
}

/** Refuses a Stop the running turn cannot take now (spec: Stop errors); the caller retries the same Stop. */
function requireInterruptible(running: TurnRow | undefined): void {
  if (running?.phase === 'finalizing') {
    throw new PaddockError(
      'turn_interrupt_pending',
      'the running turn is finalizing; retry the same Stop with the same expected_generation',
      { retryAfter: 1 },
    );
  }
  if (running?.interruptible === 0) {
    throw new PaddockError(
      'turn_interrupt_unsupported',
      'the runtime cannot safely interrupt the running turn; retry the same Stop once it finishes',
    );
  }
}

async function taskRecord(
  db: Db,
  thread: ThreadRow,
  agent: AgentRow,
  generation: number,
  cancelledGeneration: number,
  at: string,
): Promise<TaskRecord> {
  const cancelled = await listCancelledInputs(db, thread.id, cancelledGeneration);
  const sandbox = await findLiveSandbox(db, thread.id, at);
  return {
    id: thread.id,
    agent_id: thread.agent_id,
    owner_user_id: thread.owner_user_id,
    parent_task_id: null,
    title: thread.title,
    status: thread.status as ThreadStatus,
    status_info: {},
    metadata: JSON.parse(thread.metadata),
    sandbox_id: sandbox?.sandbox_id ?? null,
    machine_id: sandbox?.machine_id ?? null,
    machine_size: agent.machine_size,
    benchmark_attempt_id: null,
    created_at: thread.created_at,
    generation,
    cancelled_inputs: cancelled.map(toReceipt),
  };
}
