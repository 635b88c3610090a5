import { z } from 'zod';
import { harnesses, machineKinds } from './agents.ts';
import { networkPolicySchema, nullableNetworkPolicySchema } from './network-policy.ts';

/** Control plane (D13): organizations, teams, agents, their secrets and their integrations. */

export const orgSchema = z.object({ id: z.uuid(), name: z.string(), role: z.string() });
export const teamSchema = z.object({ id: z.uuid(), org_id: z.uuid(), name: z.string() });

export const orgParamsSchema = z.object({ org_id: z.uuid() });
export const teamParamsSchema = z.object({ org_id: z.uuid(), team_id: z.uuid() });

export const teamCreateBodySchema = z.strictObject({ name: z.string().trim().min(1).max(100) });

/** Team agent listing (spec rule 1): `limit` default 200, no cursor. */
export const teamAgentLimits = { default: 200, max: 1000 } as const;
export const teamAgentsQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(teamAgentLimits.max).default(teamAgentLimits.default),
});

const name = z.string().trim().min(1).max(200);
const tagline = z.string().max(500);
const entrypoint = z.string().max(100_000);
const defaultModel = z.string().min(1).max(200);

/** The agent record of the control plane (D13); `name` is the agent's title, `default_model` its model. */
export const controlAgentSchema = z.object({
  id: z.uuid(),
  team_id: z.uuid(),
  name: z.string(),
  tagline: z.string().nullable(),
  entrypoint: z.string().nullable(),
  default_model: z.string().nullable(),
  memory_enabled: z.boolean(),
  browser_enabled: z.boolean(),
  harness: z.enum(harnesses),
  machine_kind: z.enum(machineKinds),
  /** The agent's network policy (issue 15); `registries` when it was never set. */
  network: networkPolicySchema,
  chat_connected: z.boolean(),
  meeting_connected: z.boolean(),
  code_host_connected: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type ControlAgent = z.infer<typeof controlAgentSchema>;

/** An agent in a team's listing, with when it was granted to the team. */
export const teamAgentSchema = controlAgentSchema.extend({ granted_at: z.string() });
export type TeamAgent = z.infer<typeof teamAgentSchema>;

/** `POST /agents` (D13). */
export const agentCreateBodySchema = z.strictObject({
  team_id: z.uuid(),
  name: name.optional(),
  tagline: tagline.optional(),
  entrypoint: entrypoint.optional(),
  default_model: defaultModel.optional(),
  memory_enabled: z.boolean().optional(),
  browser_enabled: z.boolean().optional(),
  harness: z.enum(harnesses).optional(),
  machine_kind: z.enum(machineKinds).optional(),
  network: networkPolicySchema.optional(),
});
export type AgentCreateBody = z.infer<typeof agentCreateBodySchema>;

const readOnly = z
  .unknown()
  .optional()
  .refine((v) => v === undefined, {
    message: 'read-only: connect or disconnect integrations through /agents/{agent_id}/connections',
  });

/**
 * `PUT /agents/{agent_id}` (spec rule 2): omitted fields are left alone, `null` clears an optional
 * one; `harness` and `machine_kind` only as their current value (409 otherwise); the integration
 * flags are read-only (422).
 */
export const agentPutBodySchema = z.strictObject({
  name: name.optional(),
  tagline: tagline.nullable().optional(),
  entrypoint: entrypoint.nullable().optional(),
  default_model: defaultModel.nullable().optional(),
  memory_enabled: z.boolean().optional(),
  browser_enabled: z.boolean().optional(),
  harness: z.enum(harnesses).optional(),
  machine_kind: z.enum(machineKinds).optional(),
  /** `null` resets it to `registries`. */
  network: nullableNetworkPolicySchema.optional(),
  chat_connected: readOnly,
  meeting_connected: readOnly,
  code_host_connected: readOnly,
});
export type AgentPutBody = z.infer<typeof agentPutBodySchema>;

/**
 * Secrets (spec rule 4): the whole map. Key names are checked by the server (400, not 422: the
 * spec's errors table), so any string key passes this schema.
 */
export const agentSecretsSchema = z.object({ secrets: z.record(z.string(), z.string()) });
export const agentSecretsBodySchema = z.strictObject({
  secrets: z.record(z.string().max(200), z.string().max(64_000)),
});

/** The four integrations a connection report covers; only chat and meeting are managed from the CLI. */
export const connectionKinds = ['chat', 'meeting', 'code_host', 'phone'] as const;
export type ConnectionKind = (typeof connectionKinds)[number];
export const manageableConnectionKinds = ['chat', 'meeting'] as const;
export type ManageableConnectionKind = (typeof manageableConnectionKinds)[number];

/** One integration in the connection report: never a credential, only what identifies the install. */
export const connectionSchema = z.object({
  kind: z.enum(connectionKinds),
  connected: z.boolean(),
  manageable_from_cli: z.boolean(),
  unmanageable_reason: z.string().optional(),
  connected_at: z.string().nullable().optional(),
  updated_at: z.string().nullable().optional(),
  app_id: z.string().nullable().optional(),
  app_name: z.string().nullable().optional(),
  bot_name: z.string().optional(),
  bot_image_url: z.string().nullable().optional(),
});
export type Connection = z.infer<typeof connectionSchema>;

const credential = z.string().min(1).max(4096);

export const chatConnectBodySchema = z.strictObject({
  bot_token: credential,
  signing_secret: credential,
  app_id: z.string().min(1).max(200).optional(),
  app_name: z.string().min(1).max(200).optional(),
});
export type ChatConnectBody = z.infer<typeof chatConnectBodySchema>;

export const meetingConnectBodySchema = z.strictObject({
  bot_name: z.string().trim().min(1).max(200),
  bot_image_url: z.url().max(2048).optional(),
});
export type MeetingConnectBody = z.infer<typeof meetingConnectBodySchema>;
