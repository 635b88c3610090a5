import type { MachineKind } from '@paddock/protocol';
import { describe, expect, it } from 'vitest';
import { createProviderPolicy, type ProviderAvailability } from '../src/agents/provider-policy.ts';
import type { PaddockError } from '../src/errors.ts';

const allAvailable = Object.fromEntries(
  ['sandbox_a', 'sandbox_b', 'sandbox_c', 'sandbox_d', 'sandbox_e', 'sandbox_f'].map((k) => [
    k,
    { available: true },
  ]),
) as Record<MachineKind, ProviderAvailability>;

function codeOf(fn: () => void): string | undefined {
  try {
    fn();
    return undefined;
  } catch (error) {
    return (error as PaddockError).code;
  }
}

describe('provider rollout', () => {
  const policy = (rollout: { orgs?: string[]; users?: string[]; percent?: number }) =>
    createProviderPolicy(
      { sandbox_a: { enabled: true, rollout: { orgs: [], users: [], percent: 0, ...rollout } } },
      () => allAvailable,
    );
  const check = (p: ReturnType<typeof policy>, userId: string, orgId = 'org-x') =>
    codeOf(() => p.check('sandbox_a', 'coding_alpha', { userId, orgId }));

  it('admits listed organizations and users and refuses everyone else with 403', () => {
    const listed = policy({ orgs: ['org-1'], users: ['user-1'] });
    expect(check(listed, 'user-9', 'org-1')).toBeUndefined();
    expect(check(listed, 'user-1', 'org-9')).toBeUndefined();
    expect(check(listed, 'user-9', 'org-9')).toBe('provider_not_in_rollout');
  });

  it('admits a stable share of users by percent', () => {
    const users = Array.from({ length: 1000 }, (_, i) => `user-${i}`);
    const half = policy({ percent: 50 });
    const admitted = users.filter((u) => check(half, u) === undefined);
    expect(admitted.length).toBeGreaterThan(400);
    expect(admitted.length).toBeLessThan(600);
    // The same user lands on the same side every time, and a wider rollout keeps everyone it had.
    expect(users.filter((u) => check(half, u) === undefined)).toEqual(admitted);
    const wider = policy({ percent: 80 });
    expect(admitted.every((u) => check(wider, u) === undefined)).toBe(true);
    expect(users.every((u) => check(policy({ percent: 100 }), u) === undefined)).toBe(true);
    expect(users.some((u) => check(policy({ percent: 0 }), u) === undefined)).toBe(false);
  });
});
