import type { NetworkPolicy } from '@paddock/protocol';

/**
 * An agent's network policy (`networkPolicySchema`): what host names its sandbox may reach through
 * the egress proxy. `none` nothing; `registries` the package registries of the runner's tools;
 * `full` every name; `{ allow }` the listed domain patterns (`example.com` that name only,
 * `*.example.com` its subdomains but not the apex).
 */
export type { NetworkPolicy };

export type EgressDecision = { allowed: true } | { allowed: false; reason: string };

/**
 * Decides a connection by the name the client asked for (addresses are checked after, by the proxy);
 * it may wait for what it decides by (the registries, read once when first needed).
 */
export type EgressPolicy = (host: string, port: number) => EgressDecision | Promise<EgressDecision>;

export interface EgressPolicyContext {
  /** The package registries' host names (`registry.npmjs.org`, `pypi.org`, ...). */
  registries: readonly string[];
  /** Deployment-wide names (patterns as in `{ allow }`), allowed under every policy but `none`. */
  extraDomains: readonly string[];
}

/** The proxy's `policy` for an agent's network policy. Throws on a pattern that is not one. */
export function egressPolicy(
  policy: NetworkPolicy,
  context: EgressPolicyContext,
): (host: string, port: number) => EgressDecision {
  if (policy === 'none') return () => ({ allowed: false, reason: 'network policy none' });
  if (policy === 'full') return () => ({ allowed: true });
  const extra = context.extraDomains.map(domainPattern);
  // Registries are host names, not patterns: `*.` in one is refused rather than widened.
  const listed =
    policy === 'registries' ? context.registries.map(exactName) : policy.allow.map(domainPattern);
  const matchers = [...listed, ...extra];
  const name = policy === 'registries' ? 'registries' : 'allow list';
  return (host) =>
    matchers.some((matches) => matches(normalize(host)))
      ? { allowed: true }
      : { allowed: false, reason: `not in the agent's network policy (${name})` };
}

/** Lower case, without the trailing dot of a fully qualified name. */
function normalize(name: string): string {
  return name.trim().toLowerCase().replace(/\.$/, '');
}

function exactName(text: string): (host: string) => boolean {
  const name = normalize(text);
  if (name === '' || name.includes('*')) throw new Error(`${text} is not a host name`);
  return (host) => host === name;
}

function domainPattern(text: string): (host: string) => boolean {
  const pattern = normalize(text);
  if (!pattern.startsWith('*.')) return exactName(pattern);
  const suffix = pattern.slice(1); // `.example.com`
  if (suffix === '.' || suffix.slice(1).includes('*')) throw new Error(`${text} is not a domain pattern`);
  return (host) => host.length > suffix.length && host.endsWith(suffix);
}
