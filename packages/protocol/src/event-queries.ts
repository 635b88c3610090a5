import { z } from 'zod';

const seqSchema = z.coerce.number().int().min(0);

/**
 * A stored event as both listings answer it, the thread path's and the task path's (spec: "Event
 * record"), plus the thread's `seq`.
 */
export const eventRecordSchema = z.object({
  id: z.string(),
  event_id: z.string(),
  seq: z.number().int(),
  received_at: z.string(),
  ts: z.string(),
  started_at: z.string().nullable(),
  ended_at: z.string().nullable(),
  type: z.string(),
  tool_id: z.string().nullable(),
  subagent_id: z.string().nullable(),
  session_id: z.string().nullable(),
  turn_id: z.string().nullable(),
  agent_id: z.string(),
  task_id: z.string(),
  thread_id: z.string(),
  team_id: z.string(),
  group_id: z.string().nullable(),
  orchestration_id: z.string().nullable(),
  data: z.record(z.string(), z.unknown()),
});
export type EventRecord = z.infer<typeof eventRecordSchema>;

export const threadEventsQuerySchema = z.strictObject({
  after: seqSchema.optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

export const threadEventsPageSchema = z.object({
  items: z.array(eventRecordSchema),
  next_cursor: z.string().nullable(),
});

export const streamQuerySchema = z.strictObject({ after: seqSchema.optional() });

/** A boolean query parameter: `true`/`false` or `1`/`0`. */
export const booleanQuery = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

export const taskEventsQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  desc: booleanQuery.default(false),
});
