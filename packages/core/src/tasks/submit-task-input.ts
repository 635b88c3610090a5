import {
  type ModelOptions,
  modelSettingsOf,
  type SubmitTaskInputBody,
  type SubmitTaskInputResponse,
} from '@paddock/protocol';
import { findInput, type InputRow, type ThreadRow } from '@paddock/store';
import { canonicalJson } from '../agents/normalize-spec.ts';
import { reachableThread } from '../auth/access.ts';
import type { Ctx } from '../context.ts';
import { PaddockError } from '../errors.ts';
import { acceptInput, type InputServices } from '../threads/accept-input.ts';
import { inputMessages, inputModelOptions, toReceipt } from '../threads/input-receipt.ts';

/**
 * `POST /v2/tasks/{id}/inputs`: a durable receipt before the 201. A retry with the same `input_id`,
 * messages and `model_options` answers the existing receipt (`replayed`) and delivers nothing again;
 * the thread row lock makes concurrent retries line up, so exactly one of them inserts. An input
 * whose `model_options` set anything is not steered into a running turn, whose model settings are
 * fixed: it waits for the next turn, which applies them.
 */
export async function submitTaskInput(
  ctx: Ctx,
  services: InputServices,
  { taskId, input }: { taskId: string; input: SubmitTaskInputBody },
): Promise<{ response: SubmitTaskInputResponse; replayed: boolean }> {
  await reachableThread(ctx.store.db, ctx.actor, taskId);
  const messages = input.messages.map((m) => ({ role: m.role, content: m.content }));
  const accepted = await acceptInput(ctx, services, {
    threadId: taskId,
    messages,
    run: true,
    steerable: Object.keys(modelSettingsOf(input.model_options ?? {})).length === 0,
    inputId: input.input_id,
    modelOptions: input.model_options,
    replay: async (trx) => {
      const existing = await findInput(trx, input.input_id);
      if (
        existing &&
        (existing.thread_id !== taskId ||
          !sameMessages(existing, messages) ||
          !sameModelOptions(inputModelOptions(existing), input.model_options))
      ) {
        throw new PaddockError(
          'idempotency_key_reused',
          'input_id was already used with other messages or model_options',
        );
      }
      return existing;
    },
    check: (thread) => requireGeneration(thread, input.expected_generation ?? thread.generation),
  });
  const row = accepted.input!;
  return {
    replayed: accepted.replayed,
    response: {
      input: toReceipt(row),
      messages: accepted.messages.map((m) => ({ ...m, task_id: taskId, created_at: row.created_at })),
      run_started: accepted.runStarted,
      accepted_turn_id: accepted.turnId,
    },
  };
}

function requireGeneration(thread: ThreadRow, generation: number): void {
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
}

function sameMessages(input: InputRow, messages: { role: string; content: string }[]): boolean {
  const stored = inputMessages(input);
  return (
    stored.length === messages.length &&
    stored.every((m, i) => m.role === messages[i]!.role && m.content === messages[i]!.content)
  );
}

/** Key order aside; an absent `model_options` is the same as `{}`. */
function sameModelOptions(stored: ModelOptions | undefined, given: ModelOptions | undefined): boolean {
  return canonicalJson(stored ?? {}) === canonicalJson(given ?? {});
}
