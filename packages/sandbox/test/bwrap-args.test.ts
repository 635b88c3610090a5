import { describe, expect, it } from 'vitest';
import { bwrapArgs } from '../src/bwrap-args.ts';

describe('bwrap arguments', () => {
  it('makes the code binds reachable when the checkout lives under /tmp', () => {
    const args = bwrapArgs({
      env: {},
      workspaceDir: '/srv/ws',
      etcDir: '/srv/etc',
      codePaths: ['/tmp/checkout/packages', '/tmp/checkout/node_modules'],
    });
    const at = (...seq: string[]) => args.findIndex((_, i) => seq.every((s, j) => args[i + j] === s));
    const tmpfs = at('--tmpfs', '/tmp');
    const parent = at('--dir', '/tmp/checkout');
    expect(tmpfs).toBeGreaterThan(-1);
    // Created after /tmp is mounted (else the tmpfs hides it) and with a mode the sandbox uid can traverse.
    expect(parent).toBeGreaterThan(tmpfs);
    expect(args.slice(parent - 2, parent)).toEqual(['--perms', '0755']);
    expect(at('--ro-bind', '/tmp/checkout/packages', '/tmp/checkout/packages')).toBeGreaterThan(parent);
    expect(at('--dir', '/tmp')).toBe(-1);
  });
});
