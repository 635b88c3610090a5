import { z } from 'zod';
import { agentSpecSchema } from './agents.ts';
import { threadStatuses } from './events.ts';
import { messageInputSchema } from './messages.ts';

export const createThreadBodySchema = z
  .strictObject({
    agent: agentSpecSchema.optional(),
    agent_id: z.uuid().optional(),
    input: z.string().min(1).max(1_000_000).optional(),
    messages: z.array(messageInputSchema).min(1).max(100).optional(),
    title: z.string().min(1).max(200).optional(),
    metadata: z.record(z.string(), z.string()).optional(),
    group_id: z.uuid().optional(),
  })
  .refine((b) => b.agent !== undefined || b.agent_id !== undefined, {
    message: 'give agent or agent_id',
    path: ['agent'],
  })
  .refine((b) => b.input === undefined || b.messages === undefined, {
    message: 'give at most one of input and messages',
    path: ['messages'],
  });
export type CreateThreadBody = z.infer<typeof createThreadBodySchema>;

export const threadHandleSchema = z.object({
  thread_id: z.string(),
  agent_id: z.string(),
  status: z.enum(threadStatuses),
});

export const threadSchema = z.object({
  id: z.string(),
  agent_id: z.string(),
  title: z.string(),
  status: z.enum(threadStatuses),
  created_at: z.string(),
  updated_at: z.string(),
  generation: z.number().int(),
  metadata: z.record(z.string(), z.string()),
  group_id: z.string().nullable(),
});
export type Thread = z.infer<typeof threadSchema>;

/** `GET /v2/threads` (beyond the spec): the caller's threads, newest first, a page at a time. */
export const threadListQuerySchema = z.strictObject({
  agent_id: z.uuid().optional(),
  status: z.enum(threadStatuses).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  /** `next_cursor` of the previous page. */
  cursor: z.string().max(300).optional(),
});
export type ThreadListQuery = z.infer<typeof threadListQuerySchema>;

export const threadPageSchema = z.object({
  items: z.array(threadSchema),
  /** Where the next page starts; null on the last. */
  next_cursor: z.string().nullable(),
});
export type ThreadPage = z.infer<typeof threadPageSchema>;

export const threadParamsSchema = z.object({ thread_id: z.uuid() });
export const taskParamsSchema = z.object({ task_id: z.uuid() });

/** Stop's body is optional: none at all, or an empty one, is a Stop of the current generation. */
export const interruptBodySchema = z
  .strictObject({ expected_generation: z.number().int().min(0).optional() })
  .nullish();

export const inputReceiptSchema = z.object({
  id: z.string(),
  task_id: z.string(),
  message_ids: z.array(z.string()),
  status: z.string(),
  turn_id: z.string().nullable(),
  generation: z.number().int(),
  sequence: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
  reason: z.string().optional(),
  messages: z
    .array(
      z.object({
        id: z.string(),
        role: z.string(),
        content: z.string().nullable(),
        name: z.string().nullable().optional(),
        tool_calls: z.unknown().optional(),
        tool_call_id: z.string().nullable().optional(),
        metadata: z.record(z.string(), z.unknown()).optional(),
      }),
    )
    .optional(),
  /** A cancelled input's `model_options`, as given, beside its messages (when it had any). */
  model_options: z.record(z.string(), z.unknown()).optional(),
});
export type InputReceipt = z.infer<typeof inputReceiptSchema>;

/** The task record answered by Stop (spec: "Task record"). */
export const taskRecordSchema = z.object({
  id: z.string(),
  agent_id: z.string(),
  owner_user_id: z.string(),
  parent_task_id: z.string().nullable(),
  title: z.string(),
  status: z.enum(threadStatuses),
  status_info: z.record(z.string(), z.unknown()),
  metadata: z.record(z.string(), z.string()),
  sandbox_id: z.string().nullable(),
  machine_id: z.string().nullable(),
  machine_size: z.string(),
  benchmark_attempt_id: z.string().nullable(),
  created_at: z.string(),
  generation: z.number().int(),
  cancelled_inputs: z.array(inputReceiptSchema),
});
export type TaskRecord = z.infer<typeof taskRecordSchema>;
