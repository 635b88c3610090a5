import { isIPv6 } from 'node:net';
import { ipv6Bytes, timestamp } from '@paddock/protocol';
import { clearLoginFailures, listLoginFailures, recordLoginFailure, type Store } from '@paddock/store';
import { PaddockError } from '../errors.ts';

/**
 * Slows password guessing at the built-in login: after `limit` failed attempts on one username from
 * one client address within `windowMs`, that username's logins from that address are refused (429,
 * with Retry-After) until the oldest of those failures ages out; a success clears the count. Keyed
 * on the pair, so someone guessing a username (the admin's) cannot lock its owner out from
 * everywhere. Counted in the database, so guesses spread over server nodes count together.
 */
export interface LoginThrottle {
  /** Throws 429 `too_many_attempts` while the username is locked out for this client. */
  check(username: string, client: string): Promise<void>;
  failed(username: string, client: string): Promise<void>;
  succeeded(username: string, client: string): Promise<void>;
}

export function createLoginThrottle(
  store: Store,
  options: { limit: number; windowMs: number; now?: () => number },
): LoginThrottle {
  const now = options.now ?? Date.now;
  const keyOf = (username: string, client: string) => `${clientNetwork(client)} ${username}`;
  const windowStart = (at: number) => timestamp(new Date(at - options.windowMs));
  return {
    async check(username, client) {
      const at = now();
      const failures = await listLoginFailures(store.db, keyOf(username, client), windowStart(at));
      if (failures.length < options.limit) return;
      // Locked until the failure that made it `limit` within the window ages out.
      const unlocks = Date.parse(`${failures[failures.length - options.limit]}Z`) + options.windowMs;
      throw new PaddockError('too_many_attempts', 'too many failed logins for this user; try again later', {
        retryAfter: Math.max(1, Math.ceil((unlocks - at) / 1000)),
      });
    },
    async failed(username, client) {
      const at = now();
      await recordLoginFailure(store.db, keyOf(username, client), timestamp(new Date(at)), windowStart(at));
    },
    async succeeded(username, client) {
      await clearLoginFailures(store.db, keyOf(username, client));
    },
  };
}

/**
 * The network a client address stands for: an IPv4 address itself (also written IPv4-mapped), an
 * IPv6 address its /64, since one host commonly holds a whole /64 and could otherwise rotate through it.
 */
export function clientNetwork(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  const bytes = isIPv6(address) ? ipv6Bytes(address) : undefined;
  if (!bytes) return address;
  const groups = [0, 2, 4, 6].map((at) => ((bytes[at]! << 8) | bytes[at + 1]!).toString(16));
  return `${groups.join(':')}::/64`;
}
