import { createHash } from 'node:crypto';
import {
  type AgentSpec,
  agentSpecSchema,
  defaultNetworkSettings,
  domainPatternSchema,
  type NetworkPolicy,
  networkPolicySchema,
} from '@paddock/protocol';
import { describe, expect, it } from 'vitest';
import {
  agentNetwork,
  networkColumn,
  requireAllowedNetwork,
  sandboxNetwork,
} from '../src/agents/network-policy.ts';
import { hashSpec, normalizeSpec } from '../src/agents/normalize-spec.ts';

const digest = (value: string) => createHash('sha256').update(`k:${value}`).digest('hex');
const hash = (spec: AgentSpec) => hashSpec(normalizeSpec(spec), digest);

describe('network policies (issue 15)', () => {
  it('leave the hash of an existing agent alone with registries, given or not, and change it otherwise', () => {
    const spec: AgentSpec = {
      instructions: 'Answer briefly.',
      model: 'scripted',
      secrets: { API_KEY: 'v1' },
      skills: [],
      mcp_servers: [],
    };
    // Computed by the code before `network` existed: agents stored then keep these hashes.
    const before = 'fe8145ff78b1e900acf1f31b214cb9649c41bb7831370bcb63bc140c1228e06d';
    expect(hash(spec)).toBe(before);
    expect(hash({ ...spec, network: 'registries' })).toBe(before);
    expect(hash({})).toBe('4134015b4fd5d5f4f4a3684bf67f37560b5a6e3b4bd0e5786f3cb10d2b339c6c');
    expect(hash({ network: 'registries' })).toBe(hash({}));

    const others = [
      hash({ ...spec, network: 'none' }),
      hash({ ...spec, network: 'full' }),
      hash({ ...spec, network: { allow: ['example.com'] } }),
      hash({ ...spec, network: { allow: ['example.org'] } }),
    ];
    expect(new Set([before, ...others]).size).toBe(5);
  });

  it('accept host names, addresses and *. wildcards, lower-cased', () => {
    const good = {
      'Example.COM': 'example.com',
      'xn--bcher-kva.example': 'xn--bcher-kva.example',
      '*.Example.org': '*.example.org',
      localhost: 'localhost',
      'my_host-1.internal': 'my_host-1.internal',
      '10.1.2.3': '10.1.2.3',
      '2001:DB8::1': '2001:db8::1',
      '::1': '::1',
      [`${'a'.repeat(63)}.com`]: `${'a'.repeat(63)}.com`,
      [`${'abcdefghi.'.repeat(25)}com`]: `${'abcdefghi.'.repeat(25)}com`, // 253 characters
    };
    for (const [given, normalized] of Object.entries(good))
      expect(domainPatternSchema.parse(given), given).toBe(normalized);
  });

  it('refuse ports, paths, schemes, spaces, misplaced wildcards and names too long', () => {
    const bad = [
      '',
      'example.com:443',
      'example.com/path',
      'https://example.com',
      'exa mple.com',
      ' example.com',
      'example.com.',
      '.example.com',
      'a..b',
      '*',
      '*.',
      'foo.*.com',
      '*example.com',
      '**.example.com',
      '*.*.example.com',
      'bücher.example',
      '999.1.1.1',
      '10.0.0.0/8',
      '[::1]',
      '*.10.1.2.3',
      `${'a'.repeat(64)}.com`,
      `${'abcdefghi.'.repeat(26)}com`, // 263 characters
    ];
    for (const text of bad) expect(domainPatternSchema.safeParse(text).success, text).toBe(false);
  });

  it('is one of none, registries, full or a strict {allow} of at most 100 patterns', () => {
    for (const policy of ['none', 'registries', 'full', { allow: [] }, { allow: ['a.example'] }])
      expect(networkPolicySchema.safeParse(policy).success).toBe(true);
    for (const policy of [
      'open',
      null,
      { allow: ['a.example'], deny: [] },
      { allow: 'a.example' },
      { allow: Array.from({ length: 101 }, (_, i) => `h${i}.example`) },
    ])
      expect(networkPolicySchema.safeParse(policy).success).toBe(false);
    expect(agentSpecSchema.parse({ network: { allow: ['A.Example'] } }).network).toEqual({
      allow: ['a.example'],
    });
  });

  it('is stored as JSON, null for registries, and read back as registries', () => {
    expect(networkColumn(undefined)).toBeNull();
    expect(networkColumn('registries')).toBeNull();
    expect(networkColumn('none')).toBe('"none"');
    expect(networkColumn({ allow: ['a.example'] })).toBe('{"allow":["a.example"]}');
    expect(agentNetwork({ network: null })).toBe('registries');
    expect(agentNetwork({ network: '"full"' })).toBe('full');
    expect(agentNetwork({ network: '{"allow":["a.example"]}' })).toEqual({ allow: ['a.example'] });
  });

  it('caps full at registries for sandboxes where the deployment forbids it, and refuses it to writes', () => {
    const capped = { network: { ...defaultNetworkSettings, full: false } };
    const open = { network: defaultNetworkSettings };
    expect(sandboxNetwork(open, { network: '"full"' })).toBe('full');
    expect(sandboxNetwork(capped, { network: '"full"' })).toBe('registries');
    expect(sandboxNetwork(capped, { network: '"none"' })).toBe('none');
    expect(sandboxNetwork(capped, { network: '{"allow":["a.example"]}' })).toEqual({ allow: ['a.example'] });
    expect(sandboxNetwork(capped, { network: null })).toBe('registries');

    expect(() => requireAllowedNetwork(open, 'full')).not.toThrow();
    expect(() => requireAllowedNetwork(capped, 'full')).toThrow(
      expect.objectContaining({ code: 'network_not_allowed' }),
    );
    const within: (NetworkPolicy | undefined)[] = [undefined, 'none', 'registries', { allow: [] }];
    for (const policy of within) expect(() => requireAllowedNetwork(capped, policy)).not.toThrow();
  });
});
