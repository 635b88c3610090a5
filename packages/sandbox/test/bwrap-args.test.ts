import { describe, expect, it } from 'vitest';
import { bwrapArgs } from '../src/bwrap/bwrap-args.ts';

describe('bwrap arguments', () => {
  it('makes the code binds reachable when they sit under /tmp', () => {
    const args = bwrapArgs({
      env: {},
      workspaceDir: '/srv/ws',
      etcDir: '/srv/etc',
      code: [
        { host: '/srv/checkout/packages', inside: '/tmp/checkout/packages' },
        { host: '/srv/checkout/node_modules', inside: '/tmp/checkout/node_modules' },
      ],
    });
    const at = (...seq: string[]) => args.findIndex((_, i) => seq.every((s, j) => args[i + j] === s));
    const tmpfs = at('--tmpfs', '/tmp');
    const parent = at('--dir', '/tmp/checkout');
    expect(tmpfs).toBeGreaterThan(-1);
    // Created after /tmp is mounted (else the tmpfs hides it) and with a mode the sandbox uid can traverse.
    expect(parent).toBeGreaterThan(tmpfs);
    expect(args.slice(parent - 2, parent)).toEqual(['--perms', '0755']);
    expect(at('--ro-bind', '/srv/checkout/packages', '/tmp/checkout/packages')).toBeGreaterThan(parent);
    expect(at('--dir', '/tmp')).toBe(-1);
  });
});
