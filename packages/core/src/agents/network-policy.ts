import { defaultNetworkPolicy, type NetworkPolicy } from '@paddock/protocol';
import type { AgentRow } from '@paddock/store';
import type { Services } from '../context.ts';
import { PaddockError } from '../errors.ts';

/** The agent's stored network policy: `registries` when it has none (null, as agents made before have). */
export function agentNetwork(agent: Pick<AgentRow, 'network'>): NetworkPolicy {
  return agent.network === null ? defaultNetworkPolicy : (JSON.parse(agent.network) as NetworkPolicy);
}

/** The `agents.network` column for a policy: null for the default, so it is stored as agents made before. */
export function networkColumn(policy: NetworkPolicy | undefined): string | null {
  return policy === undefined || policy === defaultNetworkPolicy ? null : JSON.stringify(policy);
}

/**
 * The policy the agent's sandboxes get: its own, except `full` where the deployment no longer allows
 * it (an agent stored before the ceiling changed), which runs as `registries`.
 */
export function sandboxNetwork(
  services: Pick<Services, 'network'>,
  agent: Pick<AgentRow, 'network'>,
): NetworkPolicy {
  const policy = agentNetwork(agent);
  return policy === 'full' && !services.network.full ? defaultNetworkPolicy : policy;
}

/** 422 `network_not_allowed` when the policy is `full` and the deployment does not allow it. */
export function requireAllowedNetwork(
  services: Pick<Services, 'network'>,
  policy: NetworkPolicy | undefined,
): void {
  if (policy === 'full' && !services.network.full)
    throw new PaddockError(
      'network_not_allowed',
      'this deployment does not allow the full network policy: use registries, none or an allow list',
      { extra: { network: policy } },
    );
}
