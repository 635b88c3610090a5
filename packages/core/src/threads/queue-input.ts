import { type MessageInput, type ModelOptions, newId } from '@paddock/protocol';
import {
  allocateInputSequence,
  type Db,
  enqueueTurn,
  findActiveTurns,
  type InputRow,
  insertInput,
  type ThreadRow,
  type TurnRow,
} from '@paddock/store';
import { PaddockError } from '../errors.ts';

export interface QueuedMessage {
  id: string;
  role: string;
  content: string;
}

/**
 * Records messages as a durable input of the thread's current generation. The input is delivered
 * into the transcript when a turn takes it, so the conversation stays in the order the model saw it.
 * `run`: the input asks for a turn (every end of a turn queues the next one while such an input
 * waits); without it the messages only wait for the next turn. `modelOptions`: a task input's, for
 * the turn that takes it.
 */
export async function queueInput(
  db: Db,
  thread: ThreadRow,
  messages: MessageInput[],
  at: string,
  { run, inputId = newId(), modelOptions }: { run: boolean; inputId?: string; modelOptions?: ModelOptions },
): Promise<{ input: InputRow; messages: QueuedMessage[] }> {
  const queued = messages.map((m) => ({ id: newId(), role: m.role, content: m.content }));
  const input: InputRow = {
    id: inputId,
    thread_id: thread.id,
    status: 'queued',
    reason: null,
    turn_id: null,
    generation: thread.generation,
    sequence: await allocateInputSequence(db, thread.id),
    messages: JSON.stringify(queued),
    run: run ? 1 : 0,
    model_options: modelOptions ? JSON.stringify(modelOptions) : null,
    created_at: at,
    updated_at: at,
  };
  await insertInput(db, input);
  return { input, messages: queued };
}

/**
 * Makes sure a turn is queued for the thread (at most one waits; it takes every queued input) and
 * answers its id.
 */
export async function ensureQueuedTurn(db: Db, thread: ThreadRow, at: string): Promise<string> {
  const id = newId();
  const inserted = await enqueueTurn(db, {
    id,
    thread_id: thread.id,
    status: 'queued',
    generation: thread.generation,
    lease_owner: null,
    lease_expires_at: null,
    stop_reason: null,
    created_at: at,
    started_at: null,
    ended_at: null,
  });
  if (inserted) return id;
  return (await findActiveTurns(db, thread.id)).find((t) => t.status === 'queued')!.id;
}

/**
 * Whether a running turn's lease expired: it may be awaiting adoption by a restarted server (its
 * detached runner still runs it), until it is adopted or, after the adoption window, settled.
 */
export function awaitingAdoption(turns: TurnRow[], at: string): boolean {
  return turns.some((t) => t.status === 'running' && t.lease_expires_at !== null && t.lease_expires_at < at);
}

/**
 * New work waits while a turn awaits adoption: 409 without a receipt, for the client to retry the
 * same input until the turn is adopted or settled.
 */
export function refuseWhileAwaitingAdoption(turns: TurnRow[], at: string): void {
  if (awaitingAdoption(turns, at)) throw new PaddockError('task_busy', 'task is busy (active run lease)');
}
