import { z } from 'zod';
import { inputReceiptSchema } from './threads.ts';

/** A task input's message: `role` must be `user` when given (spec: POST /v2/tasks/{id}/inputs). */
export const taskInputMessageSchema = z.strictObject({
  role: z.literal('user').default('user'),
  content: z.string().min(1).max(1_000_000),
});

/** The reasoning efforts a model call takes (the AI SDK's, sent upstream as `reasoning_effort`). */
export const reasoningEfforts = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'] as const;

/**
 * What a turn's model calls apply: the known fields of a task input's `model_options`, with
 * `max_tokens` read as `max_output_tokens`.
 */
export const modelSettingsSchema = z.object({
  temperature: z.number().min(0).max(2).optional(),
  top_p: z.number().min(0).max(1).optional(),
  max_output_tokens: z.number().int().min(1).max(10_000_000).optional(),
  reasoning_effort: z.enum(reasoningEfforts).optional(),
});
export type ModelSettings = z.infer<typeof modelSettingsSchema>;

/**
 * A task input's `model_options` (spec: retried with the same `input_id`, `messages` and
 * `model_options`): an object whose known fields are checked; it is kept as given, other fields
 * included, and only the known ones are applied.
 */
export const modelOptionsSchema = z
  .looseObject({
    ...modelSettingsSchema.shape,
    max_tokens: modelSettingsSchema.shape.max_output_tokens,
  })
  .refine((o) => o.max_tokens === undefined || o.max_output_tokens === undefined, {
    message: 'give max_output_tokens or max_tokens, not both',
    path: ['max_tokens'],
  });
export type ModelOptions = z.infer<typeof modelOptionsSchema>;

/** The settings a turn applies from one input's `model_options`. */
export function modelSettingsOf(options: ModelOptions): ModelSettings {
  const { max_tokens, ...rest } = options;
  const known = modelSettingsSchema.parse({
    ...rest,
    max_output_tokens: rest.max_output_tokens ?? max_tokens,
  });
  return Object.fromEntries(Object.entries(known).filter(([, v]) => v !== undefined)) as ModelSettings;
}

export const submitTaskInputBodySchema = z.strictObject({
  input_id: z.uuid(),
  messages: z.array(taskInputMessageSchema).min(1).max(100),
  expected_generation: z.number().int().min(0).optional(),
  model_options: modelOptionsSchema.optional(),
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
