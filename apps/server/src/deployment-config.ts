import { readFileSync } from 'node:fs';
import type { ProviderSettings } from '@paddock/core';
import { type MachineKind, machineKinds } from '@paddock/protocol';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ConfigError } from './config.ts';

const providerSchema = z.strictObject({
  enabled: z.boolean(),
  rollout: z
    .strictObject({
      orgs: z.array(z.string()).default([]),
      users: z.array(z.string()).default([]),
      percent: z.number().int().min(0).max(100).default(0),
    })
    .optional(),
});

/** One organization's limits; a limit left out is unlimited. */
const orgLimitsSchema = z.strictObject({
  /** Sandboxes booted or booting at once (self-hosted runners' not counted). */
  live_sandboxes: z.number().int().min(0).optional(),
});

/** `default` applies to every organization without an entry of its own under `organizations`. */
const limitsSchema = z.strictObject({
  default: orgLimitsSchema.default({}),
  organizations: z.record(z.string().min(1), orgLimitsSchema).default({}),
});

const deploymentSchema = z.strictObject({
  providers: z.partialRecord(z.enum(machineKinds), providerSchema).default({}),
  limits: limitsSchema.default({ default: {}, organizations: {} }),
});

export type OrgLimits = z.infer<typeof orgLimitsSchema>;

export interface DeploymentConfig {
  providers: Partial<Record<MachineKind, ProviderSettings>>;
  limits: { default: OrgLimits; organizations: Record<string, OrgLimits> };
}

/** Without a config file only the local provider is on, for everyone, and nothing is limited. */
const defaults: DeploymentConfig = {
  providers: { sandbox_a: { enabled: true } },
  limits: { default: {}, organizations: {} },
};

/** An organization's limits: its own entry, else the default. */
export function orgLimits(limits: DeploymentConfig['limits'], orgId: string): OrgLimits {
  return limits.organizations[orgId] ?? limits.default;
}

/**
 * D4: provider switches and rollouts from the deployment config file (`PADDOCK_CONFIG`, YAML or
 * JSON, which YAML reads too). A provider the file does not name keeps its default.
 */
export function loadDeploymentConfig(path: string | undefined): DeploymentConfig {
  if (!path) return defaults;
  let raw: unknown;
  try {
    raw = parseYaml(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ConfigError(`invalid PADDOCK_CONFIG ${path}: ${(error as Error).message}`);
  }
  const result = deploymentSchema.safeParse(raw ?? {});
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new ConfigError(
      `invalid PADDOCK_CONFIG ${path}: ${issue.path.join('.') || '(root)'}: ${issue.message}`,
    );
  }
  return { providers: { ...defaults.providers, ...result.data.providers }, limits: result.data.limits };
}
