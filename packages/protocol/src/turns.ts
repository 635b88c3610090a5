import { z } from 'zod';
import { outcomeStatuses, stopReasons } from './events.ts';
import { harnessProfileSchema } from './harnesses.ts';
import { modelSettingsSchema } from './tasks.ts';

/**
 * What a turn carries between the server, a runner and the supervisor in a sandbox: the command the
 * sandbox gets, the result it answers, and the conversation's messages in both. Defined once, as
 * schemas for the edges that parse them (the runner link), with the types
 * inferred from them.
 *
 * A message's own schema is the caller's: only a harness knows a message in full (the AI SDK's
 * `ModelMessage`, whose schema the harness has), and nothing else reads more of one than its role.
 */

export const conversationRoles = ['system', 'user', 'assistant', 'tool'] as const;

/** A message of a thread's conversation, as harnesses exchange it (the AI SDK's ModelMessage shape). */
export interface ConversationMessage {
  role: (typeof conversationRoles)[number];
  content: unknown;
}

/** Ids as the runner link bounds them. */
const id = z.string().min(1).max(200);

/** A message offered to a running turn (native steering): the input message's id and its text. */
export const steeredMessageSchema = z.object({ id, content: z.string() });
export type SteeredMessage = z.infer<typeof steeredMessageSchema>;

/**
 * An enabled MCP server of the agent, as a turn carries it into the sandbox. A `stdio` server is run
 * there (its `env` values opened, like the agent's secrets); an `http` server (a `url` one) is
 * reached through the Paddock server's MCP relay by name, so neither its URL nor its headers enter
 * the sandbox.
 */
export const turnMcpServerSchema = z.discriminatedUnion('transport', [
  z.object({
    name: z.string().min(1).max(100),
    transport: z.literal('stdio'),
    command: z.string().min(1),
    args: z.array(z.string()),
    env: z.record(z.string(), z.string()),
  }),
  z.object({ name: z.string().min(1).max(100), transport: z.literal('http') }),
]);
export type TurnMcpServer = z.infer<typeof turnMcpServerSchema>;

/** A turn for the sandbox; the harness reaches the model gateway with the sandbox's own token. */
export function turnCommandSchema<M extends ConversationMessage>(message: z.ZodType<M>) {
  return z.object({
    turn_id: id,
    harness: z.string(),
    /** The ACP program behind `harness` (D9), resolved by the server; absent for Paddock's own loops. */
    harness_profile: harnessProfileSchema.optional(),
    model: z.string(),
    instructions: z.string().optional(),
    /** The whole conversation so far, oldest first; the newest user message(s) last. */
    messages: z.array(message),
    /** What the turn's model calls apply, from the `model_options` of the inputs it took. */
    model_options: modelSettingsSchema.optional(),
    /** The agent's enabled MCP servers; the sandbox keeps them running across turns. */
    mcp_servers: z.array(turnMcpServerSchema).max(50).optional(),
  });
}
export type TurnCommand<M extends ConversationMessage = ConversationMessage> = z.infer<
  ReturnType<typeof turnCommandSchema<M>>
>;

/** How a turn answers: whatever ended it, it ends with one of these. */
export function turnResultSchema<M extends ConversationMessage>(message: z.ZodType<M>) {
  return z.object({
    stopReason: z.enum(stopReasons),
    /** Set when the model called `report_outcome` (D7). */
    outcome: z.object({ status: z.enum(outcomeStatuses), summary: z.string() }).optional(),
    /** Messages this turn added to the conversation (assistant and tool messages), to persist. */
    messages: z.array(message),
    /**
     * The ids of the assistant messages among `messages`, in order: the `message_id` their
     * `assistant.message` events carry, which the transcript keeps.
     */
    assistantIds: z.array(z.uuid()).optional(),
    /** Text of the last assistant message, used for the `idle` summary when no outcome was reported. */
    lastAssistantText: z.string(),
    /** Set when stopReason is `error`. */
    error: z.object({ code: z.string(), message: z.string(), retryable: z.boolean() }).optional(),
    /** Ids of the messages steered into the turn, in the order it took them (set by the runner). */
    steeredIds: z.array(z.string()).optional(),
  });
}
export type TurnResult<M extends ConversationMessage = ConversationMessage> = z.infer<
  ReturnType<typeof turnResultSchema<M>>
>;
