import { z } from 'zod';
import type { AddressRange } from './address-ranges.ts';

const ipv4 = z.ipv4();
const ipv6 = z.ipv6();
const label = /^[a-z0-9_-]{1,63}$/;

/** A host name of ASCII labels (international names in their `xn--` form), at most 253 characters. */
function isHostName(text: string): boolean {
  const labels = text.split('.');
  // A last label of digits alone is no top-level domain: `999.1.1.1` is a bad address, not a name.
  return text.length <= 253 && labels.every((l) => label.test(l)) && !/^\d+$/.test(labels.at(-1)!);
}

/** A host name, an IPv4 or IPv6 address, or `*.` and a host name (its subdomains, not itself). */
export function isDomainPattern(text: string): boolean {
  if (ipv4.safeParse(text).success || ipv6.safeParse(text).success) return true;
  return isHostName(text.startsWith('*.') ? text.slice(2) : text);
}

/**
 * A name a sandbox may reach (issue 15): `example.com` that name only, `*.example.com` its
 * subdomains, or an IP address; lower-cased. No scheme, port, path or space.
 */
export const domainPatternSchema = z.string().max(255).toLowerCase().refine(isDomainPattern, {
  message:
    'must be a host name (ASCII; international names as xn--), an IP address, or *. and a host name; no scheme, port or path',
});

const namedPolicy = z.enum(['none', 'registries', 'full']);
const allowList = z.strictObject({ allow: z.array(domainPatternSchema).max(100) });

/**
 * An agent's network policy: what its sandbox reaches beyond the Paddock API. `registries` (the
 * default) the package registries, `none` nothing, `full` any public address, `{allow}` the names
 * listed. The deployment's ceiling may refuse `full`.
 */
export const networkPolicySchema = z.union([namedPolicy, allowList]);
export type NetworkPolicy = z.infer<typeof networkPolicySchema>;

/**
 * A policy or `null` (a patch's reset to the default). The null rides on the named branch: in the
 * OpenAPI 3.0 document `nullable` needs a `type` beside it, which an `anyOf` has not.
 */
export const nullableNetworkPolicySchema = z.union([namedPolicy.nullable(), allowList]);

/** The policy an agent has when its spec gives none. */
export const defaultNetworkPolicy = 'registries' satisfies NetworkPolicy;

/** The deployment's ceiling on agents' network policies (its config's `network:` block, issue 15). */
export interface NetworkSettings {
  /** Whether agents may have `full`; when not, `full` is refused (422) and stored ones run as `registries`. */
  full: boolean;
  /** Domain patterns every policy but `none` reaches besides its own. */
  domains: string[];
  /** Non-public addresses the egress proxies may reach (a private mirror); all others stay refused. */
  allowAddresses: AddressRange[];
}

/** No ceiling: `full` allowed, no extra domains, no private addresses. */
export const defaultNetworkSettings: NetworkSettings = { full: true, domains: [], allowAddresses: [] };
