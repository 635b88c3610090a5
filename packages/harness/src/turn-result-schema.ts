import { outcomeStatuses, stopReasons } from '@paddock/protocol';
import { modelMessageSchema } from 'ai';
import { z } from 'zod';
import type { HarnessTurnResult } from './types.ts';

/**
 * A harness turn's result as a schema, for results that come from a peer the server does not trust
 * (a runner on a user's machine): its messages join the thread's transcript, so each must be a
 * message the AI SDK takes.
 */
export const harnessTurnResultSchema = z.object({
  stopReason: z.enum(stopReasons),
  outcome: z.object({ status: z.enum(outcomeStatuses), summary: z.string() }).optional(),
  messages: z.array(modelMessageSchema),
  assistantIds: z.array(z.uuid()).optional(),
  lastAssistantText: z.string(),
  error: z.object({ code: z.string(), message: z.string(), retryable: z.boolean() }).optional(),
  steeredIds: z.array(z.string()).optional(),
}) satisfies z.ZodType<HarnessTurnResult>;
