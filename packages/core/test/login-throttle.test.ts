import type { Store } from '@paddock/store';
import { openTwoNodeStores, testDatabases } from '@paddock/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLoginThrottle } from '../src/auth/login-throttle.ts';
import { PaddockError } from '../src/errors.ts';

const windowMs = 15 * 60_000;

describe.each(testDatabases())('the login lockout, counted in the database, on $name', (database) => {
  let nodes: [Store, Store];
  let close: () => Promise<void>;
  let clock = Date.parse('2026-11-28T12:00:00Z');
  beforeAll(async () => {
    ({ nodes, close } = await openTwoNodeStores(database));
  });
  afterAll(() => close());

  /** One throttle per server node, each with nothing of its own in memory. */
  const throttles = () =>
    nodes.map((store) => createLoginThrottle(store, { limit: 10, windowMs, now: () => clock }));
  const refusal = async (check: Promise<void>) => {
    const error = await check.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    return error instanceof PaddockError ? { code: error.code, retryAfter: error.retryAfter } : error;
  };

  it('counts failures made on either node together, and a success on one clears them on both', async () => {
    const [a, b] = throttles();
    for (let i = 0; i < 10; i++) {
      await (i % 2 ? a : b)!.check('admin', '203.0.113.7');
      await (i % 2 ? a : b)!.failed('admin', '203.0.113.7');
      clock += 1000;
    }
    // The first failure was 10 s ago: locked for the rest of its 15 minutes, on both nodes.
    for (const node of [a!, b!]) {
      expect(await refusal(node.check('admin', '203.0.113.7'))).toEqual({
        code: 'too_many_attempts',
        retryAfter: windowMs / 1000 - 10,
      });
    }
    // Another client, or another username, is not locked.
    await a!.check('admin', '203.0.113.8');
    await b!.check('someone', '203.0.113.7');
    await b!.succeeded('admin', '203.0.113.7');
    await a!.check('admin', '203.0.113.7');
  });

  it('lets a failure age out of the window', async () => {
    const [a, b] = throttles();
    for (let i = 0; i < 10; i++) await a!.failed('alice', '198.51.100.1');
    expect(await refusal(b!.check('alice', '198.51.100.1'))).toMatchObject({ code: 'too_many_attempts' });
    clock += windowMs;
    await b!.check('alice', '198.51.100.1');
    // Failures out of the window are dropped from the table as new ones come.
    await b!.failed('alice', '198.51.100.1');
    const rows = await nodes[0].db
      .selectFrom('login_failures')
      .selectAll()
      .where('key', 'like', '% alice')
      .execute();
    expect(rows).toHaveLength(1);
  });
});
