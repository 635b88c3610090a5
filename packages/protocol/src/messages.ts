import { z } from 'zod';

export const messageRoles = ['user', 'assistant', 'system'] as const;
export type MessageRole = (typeof messageRoles)[number];

/** One message a client sends: `content` is required, `role` defaults to `user`. */
export const messageInputSchema = z.strictObject({
  role: z.enum(messageRoles).default('user'),
  content: z.string().min(1).max(1_000_000),
});
export type MessageInput = z.infer<typeof messageInputSchema>;

/** A message in the thread transcript (`GET /v2/threads/{id}/messages`). */
export const transcriptMessageSchema = z.object({
  id: z.string(),
  role: z.string(),
  content: z.string(),
  created_at: z.string(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});
export type TranscriptMessage = z.infer<typeof transcriptMessageSchema>;

export const appendMessagesBodySchema = z.strictObject({
  messages: z.array(messageInputSchema).min(1).max(100),
  run: z.boolean().default(false),
});

export const appendMessagesResponseSchema = z.object({
  messages: z.array(z.object({ id: z.string(), role: z.string(), content: z.string() })),
  run_started: z.boolean(),
});
