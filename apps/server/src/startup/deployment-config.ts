import { readFileSync } from 'node:fs';
import type { ProviderSettings } from '@paddock/core';
import {
  acpHarnesses,
  defaultNetworkSettings,
  domainPatternSchema,
  type HarnessProfile,
  harnessProfileSchema,
  type MachineKind,
  machineKinds,
  type NetworkSettings,
  parseAddressRange,
} from '@paddock/protocol';
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

/** What one organization may hold at once; a bound left out is not limited. */
const orgLimitsSchema = z.strictObject({
  /** Sandboxes booted or booting at once (self-hosted runners' not counted). */
  live_sandboxes: z.number().int().min(0).optional(),
  running_turns: z.number().int().positive().optional(),
});

const limitsSchema = z.strictObject({
  /** For every organization without its own entry (or whose entry leaves a bound out). */
  default: orgLimitsSchema.default({}),
  organizations: z.record(z.string().min(1), orgLimitsSchema).default({}),
});

/**
 * The ceiling on agents' network policies (issue 15): whether `full` is allowed, domain patterns
 * every policy but `none` adds, and the non-public addresses (or CIDR ranges) the proxies may reach.
 */
const networkSchema = z
  .strictObject({
    full: z.boolean().default(true),
    domains: z.array(domainPatternSchema).default([]),
    allow_addresses: z
      .array(
        z.string().transform((text, ctx) => {
          const range = parseAddressRange(text);
          if (!range) ctx.addIssue({ code: 'custom', message: `${text} is not an IP address or CIDR range` });
          return range ?? z.NEVER;
        }),
      )
      .default([]),
  })
  .transform(
    ({ full, domains, allow_addresses }): NetworkSettings => ({
      full,
      domains,
      allowAddresses: allow_addresses,
    }),
  );

const deploymentSchema = z.strictObject({
  providers: z.partialRecord(z.enum(machineKinds), providerSchema).default({}),
  limits: limitsSchema.default({ default: {}, organizations: {} }),
  /** ACP harness value → the program behind it, over the built-in profile (bring your own harness). */
  harnesses: z.partialRecord(z.enum(acpHarnesses), harnessProfileSchema).default({}),
  network: networkSchema.optional(),
});

export type OrgLimits = z.infer<typeof orgLimitsSchema>;

export interface DeploymentConfig {
  providers: Partial<Record<MachineKind, ProviderSettings>>;
  limits: z.infer<typeof limitsSchema>;
  /** The deployment's own ACP profiles, by harness value (over the built-in ones; see `harnessProfiles`). */
  harnesses: Partial<Record<string, HarnessProfile>>;
  /** The ceiling on agents' network policies, and what every sandbox's egress proxy adds. */
  network: NetworkSettings;
}

/** Without a config file only the local provider is on, for everyone, and nothing is limited. */
const defaults: DeploymentConfig = {
  providers: { sandbox_a: { enabled: true } },
  limits: { default: {}, organizations: {} },
  harnesses: {},
  network: defaultNetworkSettings,
};

/**
 * The lookup of one bound per organization (its own entry's, else the default's; undefined is no
 * limit), or undefined when the config bounds no organization at all.
 */
export function orgLimits(
  limits: DeploymentConfig['limits'],
  bound: keyof OrgLimits,
): ((orgId: string) => number | undefined) | undefined {
  const entries = [limits.default, ...Object.values(limits.organizations)];
  if (entries.every((entry) => entry[bound] === undefined)) return undefined;
  return (orgId) => limits.organizations[orgId]?.[bound] ?? limits.default[bound];
}

/**
 * D4: provider switches and rollouts, per-organization limits, harness profiles and the network
 * ceiling, from the deployment config file (`PADDOCK_CONFIG`, YAML or JSON, which YAML reads too).
 * A provider the file does not name keeps its default.
 */
export function loadDeploymentConfig(path: string | undefined): DeploymentConfig {
  if (!path) return defaults;
  let raw: unknown;
  try {
    raw = parseYaml(readFileSync(path, 'utf8'));
  } catch (error) {
    // A YAML error goes on with a quote of the line; its first line says what and where.
    const reason = (error as Error).message.split('\n')[0]!.replace(/:$/, '');
    throw new ConfigError(`invalid PADDOCK_CONFIG ${path}: ${reason}`);
  }
  const result = deploymentSchema.safeParse(raw ?? {});
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new ConfigError(
      `invalid PADDOCK_CONFIG ${path}: ${issue.path.join('.') || '(root)'}: ${issue.message}`,
    );
  }
  return {
    providers: { ...defaults.providers, ...result.data.providers },
    limits: result.data.limits,
    harnesses: result.data.harnesses,
    network: result.data.network ?? defaultNetworkSettings,
  };
}
