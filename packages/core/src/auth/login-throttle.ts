import { isIPv6 } from 'node:net';
import { PaddockError } from '../errors.ts';
import { ipv6Bytes } from '../outbound/address-ranges.ts';

/**
 * Slows password guessing at the built-in login: after `limit` failed attempts on one username from
 * one client address within `windowMs`, that username's logins from that address are refused (429,
 * with Retry-After) until the oldest failure ages out; a success clears the count. Keyed on the pair,
 * so someone guessing a username (the admin's) cannot lock its owner out from everywhere. Kept in
 * memory, per server node.
 */
export interface LoginThrottle {
  /** Throws 429 `too_many_attempts` while the username is locked out for this client. */
  check(username: string, client: string): void;
  failed(username: string, client: string): void;
  succeeded(username: string, client: string): void;
}

const maxTracked = 10_000;

export function createLoginThrottle(options: { limit: number; windowMs: number }): LoginThrottle {
  const failures = new Map<string, number[]>();
  const recent = (key: string, now: number): number[] => {
    const kept = (failures.get(key) ?? []).filter((at) => now - at < options.windowMs);
    if (kept.length === 0) failures.delete(key);
    else failures.set(key, kept);
    return kept;
  };
  const keyOf = (username: string, client: string) => `${clientNetwork(client)} ${username}`;
  return {
    check(username, client) {
      const now = Date.now();
      const kept = recent(keyOf(username, client), now);
      if (kept.length < options.limit) return;
      const retryAfter = Math.ceil((kept[0]! + options.windowMs - now) / 1000);
      throw new PaddockError('too_many_attempts', 'too many failed logins for this user; try again later', {
        retryAfter,
      });
    },
    failed(username, client) {
      const now = Date.now();
      const key = keyOf(username, client);
      if (failures.size >= maxTracked) for (const name of [...failures.keys()]) recent(name, now);
      failures.set(key, [...recent(key, now), now].slice(-options.limit));
    },
    succeeded(username, client) {
      failures.delete(keyOf(username, client));
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
