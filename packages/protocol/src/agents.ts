import { z } from 'zod';
import { commandLineWords } from './command-line.ts';
import { networkPolicySchema, nullableNetworkPolicySchema } from './network-policy.ts';

/** Harness values (spec: "Harness values"). `coding_alpha` is the default. */
export const harnesses = [
  'coding_alpha',
  'coding_beta',
  'coding_gamma',
  'coding_delta',
  'coding_epsilon',
  'coding_zeta',
  'coding_eta',
  'knowledge_cloud',
] as const;
export type HarnessName = (typeof harnesses)[number];
/** Paddock's own loops: every other harness value is an ACP program a deployment may remap (D9). */
export const builtinHarnesses = ['coding_alpha', 'knowledge_cloud'] as const;
/** The values behind which an ACP program runs (D9). */
export const acpHarnesses = harnesses.filter(
  (value) => !(builtinHarnesses as readonly string[]).includes(value),
) as [HarnessName, ...HarnessName[]];

/** Sandbox providers (`machine_kind`). `sandbox_a` is the default, local provider. */
export const machineKinds = [
  'sandbox_a',
  'sandbox_b',
  'sandbox_c',
  'sandbox_d',
  'sandbox_e',
  'sandbox_f',
] as const;
export type MachineKind = (typeof machineKinds)[number];

export const machineSizes = ['S', 'M', 'L'] as const;
export type MachineSize = (typeof machineSizes)[number];

/** An environment-variable name, as accepted for secret keys. */
export const envNameSchema = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a valid environment-variable name');

export const mcpServerSchema = z
  .strictObject({
    name: z.string().min(1).max(100),
    url: z.url().optional(),
    command: z.string().min(1).optional(),
    args: z.array(z.string()).optional(),
    env: z.record(envNameSchema, z.string()).optional(),
    headers: z.record(z.string(), z.string()).optional(),
    /** `false` switches the server off without removing it (not probed, reported disabled). */
    enabled: z.boolean().optional(),
  })
  .refine((s) => (s.url === undefined) !== (s.command === undefined), {
    message: 'give exactly one of url or command',
  })
  .refine((s) => s.command === undefined || s.args !== undefined || splits(s.command), {
    message:
      'command: a command line whose quotes are closed, naming a program (or give args for an exact argv)',
    path: ['command'],
  });

/** Whether an MCP server's `command`, given without `args`, splits into a program and its arguments. */
function splits(line: string): boolean {
  try {
    return commandLineWords(line).length > 0;
  } catch {
    return false;
  }
}

/**
 * An MCP server as answers show it: its `headers` and `env` values are secrets, never answered;
 * only their names are (`header_names`, `env_names`).
 */
export const mcpServerViewSchema = z.object({
  name: z.string(),
  url: z.string().optional(),
  command: z.string().optional(),
  args: z.array(z.string()).optional(),
  header_names: z.array(z.string()).optional(),
  env_names: z.array(z.string()).optional(),
  enabled: z.boolean().optional(),
});
export type McpServerView = z.infer<typeof mcpServerViewSchema>;

export const skillSchema = z.strictObject({
  source: z
    .string()
    .regex(/^registry:[\w.-]+\/[\w.-]+(@[\w.-]+)?$/, 'must be registry:<creator>/<slug>[@<version>]'),
});

/** The agent spec, inline in `POST /v2/threads`. Unknown fields are refused (422). */
export const agentSpecSchema = z.strictObject({
  harness: z.enum(harnesses).optional(),
  instructions: z.string().max(200_000).optional(),
  model: z.string().min(1).max(200).optional(),
  mcp_servers: z.array(mcpServerSchema).max(50).optional(),
  skills: z.array(skillSchema).max(100).optional(),
  secrets: z.record(envNameSchema, z.string().max(64_000)).optional(),
  entrypoint: z.string().max(100_000).optional(),
  machine_kind: z.enum(machineKinds).optional(),
  /** Sandbox size (beyond the spec's field table; the Limits table ties sizes to the agent spec). */
  machine_size: z.enum(machineSizes).optional(),
  title: z.string().min(1).max(200).optional(),
  /** What the sandbox reaches beyond the Paddock API (issue 15); `registries` when left out. */
  network: networkPolicySchema.optional(),
});
export type AgentSpec = z.infer<typeof agentSpecSchema>;

/**
 * `PATCH /v2/agents/{agent_id}`: fields given replace the agent's (`null` clears an optional one,
 * and resets `network`); `harness` and `machine_kind` may be given only with their current value
 * (409 otherwise).
 */
export const agentPatchSchema = z.strictObject({
  instructions: z.string().max(200_000).nullable().optional(),
  title: z.string().min(1).max(200).optional(),
  model: z.string().min(1).max(200).nullable().optional(),
  entrypoint: z.string().max(100_000).nullable().optional(),
  secrets: z.record(envNameSchema, z.string().max(64_000)).optional(),
  mcp_servers: z.array(mcpServerSchema).max(50).optional(),
  skills: z.array(skillSchema).max(100).optional(),
  machine_size: z.enum(machineSizes).optional(),
  harness: z.enum(harnesses).optional(),
  machine_kind: z.enum(machineKinds).optional(),
  /** `null` resets it to the default, `registries`. */
  network: nullableNetworkPolicySchema.optional(),
});
export type AgentPatch = z.infer<typeof agentPatchSchema>;

/** An agent as the public surface shows it: secret names, never their values. */
export const agentRecordSchema = z.object({
  id: z.uuid(),
  team_id: z.uuid(),
  title: z.string(),
  harness: z.enum(harnesses),
  machine_kind: z.enum(machineKinds),
  machine_size: z.enum(machineSizes),
  model: z.string().nullable(),
  instructions: z.string().nullable(),
  entrypoint: z.string().nullable(),
  mcp_servers: z.array(mcpServerViewSchema),
  skills: z.array(skillSchema),
  secret_names: z.array(z.string()),
  network: networkPolicySchema,
  created_at: z.string(),
  updated_at: z.string(),
});
export type AgentRecord = z.infer<typeof agentRecordSchema>;

export const agentParamsSchema = z.object({ agent_id: z.uuid() });
export const agentSecretParamsSchema = z.object({ agent_id: z.uuid(), secret_name: envNameSchema });
/** `PUT /v2/agents/{agent_id}/secrets/{secret_name}` (beyond the spec): one secret's new value. */
export const agentSecretBodySchema = z.strictObject({ value: z.string().max(64_000) });
