import { z } from 'zod';

/**
 * An agent's schedule (issue 16 §3): each due time of `cron`, read in `time_zone`, starts one thread
 * on the agent with `input`. `next_run_at`, `last_run_at` are UTC D3 timestamps.
 */
export const scheduleSchema = z.object({
  id: z.uuid(),
  agent_id: z.uuid(),
  /** Unique per agent: the name of its `schedule` component in the agent's manifest. */
  name: z.string(),
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

/** A schedule's name: lower-case letters, digits, `-`, `_` and `.`, as a folder name in a linked agent. */
export const scheduleNameSchema = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9._-]{0,63}$/,
    'lower-case letters, digits, ".", "_" and "-", at most 64, not starting with a symbol',
  );

/** What a schedule does, as a manifest's `schedule` component holds it (its `schedule.json`). */
export const scheduleConfigSchema = z.strictObject({
  cron: z.string().trim().min(1).max(200),
  time_zone: z.string().min(1).max(100).default('UTC'),
  input: z.string().min(1).max(1_000_000),
  enabled: z.boolean().default(true),
});
export type ScheduleConfig = z.infer<typeof scheduleConfigSchema>;

/**
 * `POST /agents/{agent_id}/schedules`. `name` defaults to the first free `schedule-<n>`. `cron` has five fields (minute, hour, day of month, month,
 * day of week) or is a nickname such as `@daily`; `time_zone` is an IANA name. A cron expression
 * that does not parse or never comes due, or an unknown time zone, is a 422.
 */
export const scheduleCreateBodySchema = scheduleConfigSchema.extend({ name: scheduleNameSchema.optional() });
export type ScheduleCreateBody = z.infer<typeof scheduleCreateBodySchema>;

export const scheduleParamsSchema = z.object({ agent_id: z.uuid(), schedule_id: z.uuid() });
