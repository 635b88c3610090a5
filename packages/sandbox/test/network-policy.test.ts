import { describe, expect, it } from 'vitest';
import { egressPolicy } from '../src/egress/network-policy.ts';

const context = { registries: ['registry.npmjs.org', 'pypi.org'], extraDomains: ['*.corp.example'] };
const allows = (policy: Parameters<typeof egressPolicy>[0], host: string) =>
  egressPolicy(policy, context)(host, 443).allowed;

describe('egressPolicy', () => {
  it('none refuses everything, extra domains too, and says so', () => {
    const decide = egressPolicy('none', context);
    expect(decide('registry.npmjs.org', 443)).toEqual({ allowed: false, reason: 'network policy none' });
    expect(decide('git.corp.example', 443).allowed).toBe(false);
  });

  it('full allows every name', () => {
    expect(allows('full', 'anything.example')).toBe(true);
    expect(allows('full', '10.0.0.1')).toBe(true);
  });

  it('registries allows exactly the registry names, and the extra domains', () => {
    expect(allows('registries', 'registry.npmjs.org')).toBe(true);
    expect(allows('registries', 'PyPI.org.')).toBe(true);
    expect(allows('registries', 'git.corp.example')).toBe(true);
    expect(allows('registries', 'files.pythonhosted.org')).toBe(false);
    expect(allows('registries', 'evil.registry.npmjs.org')).toBe(false);
    expect(allows('registries', 'registry.npmjs.org.evil.example')).toBe(false);
    expect(egressPolicy('registries', context)('github.com', 443)).toEqual({
      allowed: false,
      reason: "not in the agent's network policy (registries)",
    });
  });

  it('an allow list: a name matches itself only, *. matches subdomains but not the apex', () => {
    const policy = { allow: ['api.example.com', '*.github.com'] };
    expect(allows(policy, 'api.example.com')).toBe(true);
    expect(allows(policy, 'API.Example.COM.')).toBe(true);
    expect(allows(policy, 'www.api.example.com')).toBe(false);
    expect(allows(policy, 'example.com')).toBe(false);
    expect(allows(policy, 'codeload.github.com')).toBe(true);
    expect(allows(policy, 'a.b.github.com')).toBe(true);
    expect(allows(policy, 'github.com')).toBe(false);
    expect(allows(policy, 'evilgithub.com')).toBe(false);
    expect(allows(policy, 'github.com.evil.example')).toBe(false);
    expect(allows(policy, 'registry.npmjs.org')).toBe(false);
    expect(allows(policy, 'x.corp.example')).toBe(true);
    expect(allows(policy, 'corp.example')).toBe(false);
    expect(egressPolicy(policy, context)('example.com', 443)).toEqual({
      allowed: false,
      reason: "not in the agent's network policy (allow list)",
    });
  });

  it('a trailing dot in a pattern is ignored too', () => {
    expect(allows({ allow: ['*.example.com.'] }, 'a.example.com')).toBe(true);
    expect(allows({ allow: ['example.com.'] }, 'example.com')).toBe(true);
  });

  it('refuses patterns that are not one', () => {
    expect(() => egressPolicy({ allow: ['*'] }, context)).toThrow(/not a host name/);
    expect(() => egressPolicy({ allow: ['*.'] }, context)).toThrow();
    expect(() => egressPolicy({ allow: ['a.*.example.com'] }, context)).toThrow();
    expect(() => egressPolicy({ allow: ['*.*.example.com'] }, context)).toThrow();
    expect(() => egressPolicy('registries', { registries: ['*.npmjs.org'], extraDomains: [] })).toThrow();
  });
});
