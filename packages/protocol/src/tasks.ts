import { z } from 'zod';
import { inputReceiptSchema } from './threads.ts';

/** A task input's message: `role` must be `user` when given (spec: POST /v2/tasks/{id}/inputs). */
export const taskInputMessageSchema = z.strictObject({
  role: z.literal('user').default('user'),
  content: z.string().min(1).max(1_000_000),
});

export const submitTaskInputBodySchema = z.strictObject({
  input_id: z.uuid(),
  messages: z.array(taskInputMessageSchema).min(1).max(100),
  expected_generation: z.number().int().min(0).optional(),
});
export type SubmitTaskInputBody = z.infer<typeof submitTaskInputBodySchema>;

export const taskInputMessageViewSchema = z.object({
  id: z.string(),
  task_id: z.string(),
  role: z.string(),
  content: z.string(),
  created_at: z.string(),
});

export const submitTaskInputResponseSchema = z.object({
  input: inputReceiptSchema,
  messages: z.array(taskInputMessageViewSchema),
  run_started: z.boolean(),
  accepted_turn_id: z.string().nullable(),
});
export type SubmitTaskInputResponse = z.infer<typeof submitTaskInputResponseSchema>;

/** `GET /v2/tasks/{id}/inputs` (D11). */
export const taskInputsSchema = z.object({
  generation: z.number().int(),
  active_turn_id: z.string().nullable(),
  items: z.array(inputReceiptSchema),
});

export const taskInputParamsSchema = z.object({ task_id: z.uuid(), input_id: z.uuid() });
