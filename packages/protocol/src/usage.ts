import { z } from 'zod';

/** `GET /orgs/{org_id}/usage` (beyond the spec): the last `days` UTC days, today included. */
export const usageQuerySchema = z.strictObject({
  days: z.coerce.number().int().min(1).max(366).default(30),
});

const tokens = { input_tokens: z.number().int(), output_tokens: z.number().int() };

/** An organization's model tokens through the gateway: by day, by agent, and its busiest threads. */
export const usageReportSchema = z.object({
  org_id: z.uuid(),
  /** The first instant counted (UTC midnight, D3). */
  from: z.string(),
  /** Each UTC day with any usage, oldest first. */
  days: z.array(z.object({ date: z.string(), ...tokens })),
  /** Calls made with a thread's token, by the thread's agent. */
  agents: z.array(z.object({ agent_id: z.uuid(), ...tokens })),
  /** The threads that used the most, most first (at most 20). */
  threads: z.array(z.object({ thread_id: z.uuid(), agent_id: z.uuid(), title: z.string(), ...tokens })),
});
export type UsageReport = z.infer<typeof usageReportSchema>;
