import type { InputReceipt, ModelOptions } from '@paddock/protocol';
import type { InputRow } from '@paddock/store';
import type { QueuedMessage } from './queue-input.ts';

export function inputMessages(input: InputRow): QueuedMessage[] {
  return JSON.parse(input.messages) as QueuedMessage[];
}

/** A task input's `model_options` as the client gave them; undefined when it had none. */
export function inputModelOptions(input: InputRow): ModelOptions | undefined {
  return input.model_options === null ? undefined : (JSON.parse(input.model_options) as ModelOptions);
}

/**
 * An input as its receipt; a cancelled one also carries its `reason` and `messages` (spec: Task
 * record), and its `model_options` when it had any.
 */
export function toReceipt(input: InputRow): InputReceipt {
  const messages = inputMessages(input);
  const receipt: InputReceipt = {
    id: input.id,
    task_id: input.thread_id,
    message_ids: messages.map((m) => m.id),
    status: input.status,
    turn_id: input.turn_id,
    generation: input.generation,
    sequence: input.sequence,
    created_at: input.created_at,
    updated_at: input.updated_at,
  };
  if (input.status !== 'cancelled') return receipt;
  return {
    ...receipt,
    reason: input.reason ?? undefined,
    messages: messages.map((m) => ({ ...m, name: null, tool_calls: null, tool_call_id: null, metadata: {} })),
    model_options: inputModelOptions(input),
  };
}
