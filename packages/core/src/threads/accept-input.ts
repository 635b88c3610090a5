import { type MessageInput, type ModelOptions, newId, timestamp } from '@paddock/protocol';
import { appendEvents, type EventLog } from '@paddock/runtime';
import { type Db, findActiveTurns, type InputRow, lockThread, type ThreadRow } from '@paddock/store';
import type { Ctx, Services } from '../context.ts';
import { threadNotFound } from '../errors.ts';
import { admitThreadSandbox } from '../machines/live-sandboxes.ts';
import { requireMachineAlive } from '../machines/machine-lifecycle.ts';
import { deliverMessages } from './deliver-messages.ts';
import { inputMessages } from './input-receipt.ts';
import {
  ensureQueuedTurn,
  type QueuedMessage,
  queueInput,
  refuseWhileAwaitingAdoption,
} from './queue-input.ts';
import { requireInService } from './recovery.ts';
import { steeringTarget } from './steering-target.ts';
import { updateThreadStatus } from './thread-status.ts';

/** What taking an input uses of the services (the verbs that take inputs pass theirs on). */
export type InputServices = Pick<Services, 'sandboxLimits' | 'steering' | 'turnQueue' | 'turnTrace'> & {
  events: Pick<EventLog, 'publish'>;
};

export interface InputRequest {
  threadId: string;
  messages: MessageInput[];
  /**
   * The input asks for a turn. Without it the messages wait for the next turn, or join the
   * transcript at once when no turn is running or queued.
   */
  run: boolean;
  /** The input may join the running turn (native steering, D5) when no other input waits. */
  steerable: boolean;
  inputId?: string;
  modelOptions?: ModelOptions;
  /**
   * The route's own checks, under the thread lock before anything is written. `replay` answers the
   * input a retry of the same request created, to answer again without writing anything; `check`
   * runs after it (and after the sandbox's end is checked).
   */
  replay?: (trx: Db, thread: ThreadRow) => Promise<InputRow | undefined>;
  check?: (thread: ThreadRow) => void;
}

export interface AcceptedInput {
  /** The durable input; absent when the messages joined the transcript at once. */
  input?: InputRow;
  messages: QueuedMessage[];
  /** The input queued a turn on a thread that had none running or queued. */
  runStarted: boolean;
  /** The turn that takes or took the input: the running one it is steered into, or the queued one. */
  turnId: string | null;
  replayed: boolean;
}

/**
 * The one way client messages come into a thread (task inputs, thread messages): under the
 * thread's lock the checks, then a durable input, steered into the running turn or with a turn
 * queued to take it (the thread `running`), all in one transaction; after the commit the worker is
 * woken, or the input is offered to the running turn.
 */
export async function acceptInput(
  ctx: Pick<Ctx, 'store' | 'clock' | 'log'>,
  services: InputServices,
  request: InputRequest,
): Promise<AcceptedInput> {
  const { threadId, run } = request;
  const { accepted, events, steerInto } = await ctx.store.transaction(async (trx) => {
    const at = timestamp(new Date(ctx.clock.now()));
    const thread = await lockThread(trx, threadId, at);
    if (!thread) throw threadNotFound();
    // Only `run` asks for work; without it the messages are just kept, which a task under recovery allows.
    if (run) requireInService(thread);
    const existing = await request.replay?.(trx, thread);
    if (existing) return { accepted: await replayed(trx, existing), events: [], steerInto: undefined };
    // After the replay: an input accepted before the sandbox's end still answers its receipt.
    if (run) requireMachineAlive(thread);
    request.check?.(thread);
    const active = await findActiveTurns(trx, threadId);
    const busy = active.length > 0;
    if (run) refuseWhileAwaitingAdoption(active, at);
    if (run && !busy) await admitThreadSandbox(trx, services.sandboxLimits, thread);
    if (!run && !busy) {
      const messages = request.messages.map((m) => ({ id: newId(), role: m.role, content: m.content }));
      const drafts = await deliverMessages(trx, threadId, messages, null, at);
      const accepted = { messages, runStarted: false, turnId: null, replayed: false };
      return { accepted, events: await appendEvents(trx, threadId, null, drafts), steerInto: undefined };
    }
    const target = run && request.steerable ? await steeringTarget(trx, threadId, active) : undefined;
    const { input, messages } = await queueInput(trx, thread, request.messages, at, {
      run,
      inputId: request.inputId,
      modelOptions: request.modelOptions,
    });
    let turnId = target ?? null;
    if (run && !target) {
      turnId = await ensureQueuedTurn(trx, thread, at);
      if (!busy) await updateThreadStatus(trx, thread, { on: 'turn_active' });
    }
    const accepted = { input, messages, runStarted: run && !busy, turnId, replayed: false };
    return { accepted, events: [], steerInto: target };
  });
  services.events.publish(events);
  if (accepted.runStarted || steerInto) services.turnTrace.mark(threadId, 'input_stored');
  if (accepted.runStarted) services.turnQueue.wake(threadId);
  if (steerInto) {
    // The answer acknowledges the durable input; delivery into the turn happens after it.
    void services.steering
      .deliver(threadId, steerInto, accepted.input!.id)
      .catch((err) => ctx.log.error({ err, thread_id: threadId }, 'steering an input failed'));
  }
  return accepted;
}

/** A retry's input as it stands: the turn that took it, or the queued one it waits for. */
async function replayed(trx: Db, input: InputRow): Promise<AcceptedInput> {
  const queuedTurn = (await findActiveTurns(trx, input.thread_id)).find((t) => t.status === 'queued');
  const turnId = input.turn_id ?? (input.status === 'queued' ? (queuedTurn?.id ?? null) : null);
  return { input, messages: inputMessages(input), runStarted: false, turnId, replayed: true };
}
