import { z } from 'zod';

/**
 * An agent's schedule (issue 16 §3): each due time of `cron`, read in `time_zone`, starts one thread
 * on the agent with `input`. `next_run_at`, `last_run_at` are UTC D3 timestamps.
 */
export const scheduleSchema = z.object({
  id: z.uuid(),
  agent_id: z.uuid(),
  cron: z.string(),
  time_zone: z.string(),
  input: z.string(),
  enabled: z.boolean(),
  next_run_at: z.string(),
  last_run_at: z.string().nullable(),
  /** The thread the last fire started (null until one did). */
  last_thread_id: z.uuid().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type Schedule = z.infer<typeof scheduleSchema>;

/**
 * `POST /agents/{agent_id}/schedules`. `cron` has five fields (minute, hour, day of month, month,
 * day of week) or is a nickname such as `@daily`; `time_zone` is an IANA name. A cron expression
 * that does not parse or never comes due, or an unknown time zone, is a 422.
 */
export const scheduleCreateBodySchema = z.strictObject({
  cron: z.string().trim().min(1).max(200),
  time_zone: z.string().min(1).max(100).default('UTC'),
  input: z.string().min(1).max(1_000_000),
  enabled: z.boolean().default(true),
});
export type ScheduleCreateBody = z.infer<typeof scheduleCreateBodySchema>;

export const scheduleParamsSchema = z.object({ agent_id: z.uuid(), schedule_id: z.uuid() });
