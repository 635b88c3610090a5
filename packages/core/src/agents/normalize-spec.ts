import { createHash } from 'node:crypto';
import {
  type AgentSpec,
  defaultNetworkPolicy,
  type HarnessName,
  type MachineKind,
  type MachineSize,
  providerFacts,
} from '@paddock/protocol';

export type NormalizedSpec = AgentSpec & {
  harness: HarnessName;
  machine_kind: MachineKind;
  machine_size: MachineSize;
  mcp_servers: NonNullable<AgentSpec['mcp_servers']>;
  skills: NonNullable<AgentSpec['skills']>;
  secrets: Record<string, string>;
};

/**
 * D4: defaults filled in, so that equal agents hash equal however they were written. The default
 * network policy, `registries`, is left out instead (given or not): agents made before the field
 * existed keep their hash.
 */
export function normalizeSpec(spec: AgentSpec): NormalizedSpec {
  const machineKind = spec.machine_kind ?? 'sandbox_a';
  return {
    ...spec,
    harness: spec.harness ?? 'coding_alpha',
    machine_kind: machineKind,
    // The provider's smallest size: S where it offers S, else L (the providers that offer L alone).
    machine_size: spec.machine_size ?? providerFacts[machineKind].sizes[0]!,
    mcp_servers: spec.mcp_servers ?? [],
    skills: spec.skills ?? [],
    secrets: spec.secrets ?? {},
    network: spec.network === defaultNetworkPolicy ? undefined : spec.network,
  };
}

/**
 * SHA-256 of the canonical JSON (keys sorted) of the normalized spec. Secret values enter as keyed
 * digests, so a different value still gives a new agent but the stored hash reveals nothing of it.
 */
export function hashSpec(spec: NormalizedSpec, digestSecret: (value: string) => string): string {
  const secrets = Object.fromEntries(Object.entries(spec.secrets).map(([k, v]) => [k, digestSecret(v)]));
  return createHash('sha256')
    .update(canonicalJson({ ...spec, secrets }))
    .digest('hex');
}

export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
