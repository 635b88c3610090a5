import { PaddockError } from '../errors.ts';

/**
 * Slows password guessing at the built-in login: after `limit` failed attempts on one username
 * within `windowMs`, that username's logins are refused (429, with Retry-After) until the oldest
 * failure ages out; a success clears its count. Kept in memory, per server node.
 */
export interface LoginThrottle {
  /** Throws 429 `too_many_attempts` while the username is locked out. */
  check(username: string): void;
  failed(username: string): void;
  succeeded(username: string): void;
}

const maxTracked = 10_000;

export function createLoginThrottle(options: { limit: number; windowMs: number }): LoginThrottle {
  const failures = new Map<string, number[]>();
  const recent = (username: string, now: number): number[] => {
    const kept = (failures.get(username) ?? []).filter((at) => now - at < options.windowMs);
    if (kept.length === 0) failures.delete(username);
    else failures.set(username, kept);
    return kept;
  };
  return {
    check(username) {
      const now = Date.now();
      const kept = recent(username, now);
      if (kept.length < options.limit) return;
      const retryAfter = Math.ceil((kept[0]! + options.windowMs - now) / 1000);
      throw new PaddockError('too_many_attempts', 'too many failed logins for this user; try again later', {
        retryAfter,
      });
    },
    failed(username) {
      const now = Date.now();
      if (failures.size >= maxTracked) for (const name of [...failures.keys()]) recent(name, now);
      failures.set(username, [...recent(username, now), now].slice(-options.limit));
    },
    succeeded(username) {
      failures.delete(username);
    },
  };
}
