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

const deploymentSchema = z.strictObject({
  providers: z.partialRecord(z.enum(machineKinds), providerSchema).default({}),
});

export interface DeploymentConfig {
  providers: Partial<Record<MachineKind, ProviderSettings>>;
}

/** Without a config file only the local provider is on, for everyone. */
const defaults: DeploymentConfig = { providers: { sandbox_a: { enabled: true } } };

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
  return { providers: { ...defaults.providers, ...result.data.providers } };
}
