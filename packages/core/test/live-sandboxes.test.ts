import { newId, timestamp } from '@paddock/protocol';
import type { Store, ThreadRow } from '@paddock/store';
import { openTwoNodeStores, queuedTurnRow, seedThread, testDatabases } from '@paddock/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { SandboxLimits } from '../src/machines/live-sandboxes.ts';
import { claimSandbox } from '../src/turns/thread-sandbox.ts';

describe.each(testDatabases())('live sandboxes counted from the database on $name', (database) => {
  let nodes: Store[];
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ nodes, close } = await openTwoNodeStores(database));
  });
  afterAll(() => close());

  /** `count` threads of one organization (one team, one agent). */
  async function threadsOfOneOrg(count: number): Promise<ThreadRow[]> {
    const [store] = nodes;
    const { threadId } = await seedThread(store!);
    const seed = await store!.db
      .selectFrom('threads')
      .selectAll()
      .where('id', '=', threadId)
      .executeTakeFirstOrThrow();
    const rows = [seed];
    for (let i = 1; i < count; i++) {
      const row = { ...seed, id: newId(), created_at: timestamp(), updated_at: timestamp() };
      await store!.db.insertInto('threads').values(row).execute();
      rows.push(row);
    }
    return rows;
  }

  it('admits no more than the limit when two nodes claim at once, and forgets a dead node after a lease', async () => {
    const limits: SandboxLimits = { liveSandboxes: () => 3, leaseMs: 1_500 };
    const threads = await threadsOfOneOrg(10);
    const claims = await Promise.allSettled(
      threads.map((thread, i) =>
        claimSandbox({ store: nodes[i % 2]!, sandboxLimits: limits }, thread, 'sandbox_a'),
      ),
    );
    expect(claims.filter((c) => c.status === 'fulfilled')).toHaveLength(3);
    for (const claim of claims.filter((c) => c.status === 'rejected'))
      expect((claim as PromiseRejectedResult).reason).toMatchObject({ code: 'sandbox_limit_reached' });

    // Nobody renews the three (their node died): a lease later they no longer count.
    const waiting = threads.filter((_, i) => claims[i]!.status === 'rejected');
    // A lease later by the clock the leases are counted with; the database's own timers run on.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 1_600 });
    const later = await Promise.allSettled(
      waiting.map((thread, i) =>
        claimSandbox({ store: nodes[i % 2]!, sandboxLimits: limits }, thread, 'sandbox_a'),
      ),
    ).finally(() => vi.useRealTimers());
    expect(later.filter((c) => c.status === 'fulfilled')).toHaveLength(3);
  });

  it('counts a thread with a queued turn (it will boot), and not a self-hosted runner sandbox', async () => {
    const limits: SandboxLimits = { liveSandboxes: () => 1, leaseMs: 60_000 };
    const [queued, other] = await threadsOfOneOrg(2);
    await nodes[0]!.db.insertInto('turns').values(queuedTurnRow(queued!.id)).execute();
    await expect(
      claimSandbox({ store: nodes[1]!, sandboxLimits: limits }, other!, 'sandbox_a'),
    ).rejects.toMatchObject({
      code: 'sandbox_limit_reached',
    });
    // The queued thread's own boot is admitted: it is the one counted.
    await claimSandbox({ store: nodes[0]!, sandboxLimits: limits }, queued!, 'sandbox_a');
    await claimSandbox({ store: nodes[1]!, sandboxLimits: limits }, other!, 'sandbox_e');
  });
});
