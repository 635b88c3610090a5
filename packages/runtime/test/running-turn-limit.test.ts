import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { newId, timestamp } from '@paddock/protocol';
import { createTurnQueue, createTurnWorker, type TurnWorker } from '@paddock/runtime';
import { enqueueTurn, finishTurn, openStore, type Store } from '@paddock/store';
import { createPostgresDatabase, queuedTurnRow, seedThread, testDatabases } from '@paddock/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** Nodes sharing one database, each its own connection (pool) and turn worker. */
const nodes = 3;

describe.each(testDatabases())('per-organization running-turn limit on $name', (database) => {
  let stores: Store[];
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'paddock-limit-'));
    const postgres =
      database.name === 'postgres' ? await createPostgresDatabase(database.adminUrl) : undefined;
    stores = [];
    for (let i = 0; i < nodes; i++) stores.push(await openStore({ databaseUrl: postgres?.url, dataDir }));
    cleanup = async () => {
      for (const store of stores) await store.close();
      await postgres?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    };
  });
  afterAll(() => cleanup());

  /** `count` idle threads of one new organization, each with a queued turn. */
  async function queuedTurnsOfNewOrg(count: number): Promise<{ orgId: string; threadIds: Set<string> }> {
    const store = stores[0]!;
    const { threadId } = await seedThread(store);
    const first = await store.db
      .selectFrom('threads')
      .innerJoin('teams', 'teams.id', 'threads.team_id')
      .selectAll('threads')
      .select('teams.org_id')
      .where('threads.id', '=', threadId)
      .executeTakeFirstOrThrow();
    const { org_id: orgId, ...thread } = first;
    const threadIds = new Set<string>();
    for (let i = 0; i < count; i++) {
      const id = i === 0 ? thread.id : newId();
      if (i > 0)
        await store.db
          .insertInto('threads')
          .values({ ...thread, id })
          .execute();
      await enqueueTurn(store.db, queuedTurnRow(id));
      threadIds.add(id);
    }
    return { orgId, threadIds };
  }

  it('runs at most the limit of one organization at once across nodes, starts the waiting ones as turns end, and holds back no other', async () => {
    const limited = (await queuedTurnsOfNewOrg(6)).orgId;
    const { orgId: free, threadIds: freeThreads } = await queuedTurnsOfNewOrg(3);
    const finished = new Set<string>();
    // Counted where the turns run, from a worker's claim until just before the turn's finish is stored.
    const running = { [limited]: 0, [free]: 0 };
    const peak = { limited: 0, free: 0 };
    const workers: TurnWorker[] = stores.map((store) =>
      createTurnWorker({
        store,
        queue: createTurnQueue(),
        // A turn here holds its slot for a while (the free organization's until all three of its
        // turns run, which they do only if none is held back), then ends the way a settle does.
        execute: async (turn) => {
          const org = freeThreads.has(turn.thread_id) ? free : limited;
          running[org]! += 1;
          peak.limited = Math.max(peak.limited, running[limited]!);
          peak.free = Math.max(peak.free, running[free]!);
          const until = Date.now() + (org === free ? 10_000 : 300);
          do await sleep(20);
          while (Date.now() < until && (org === limited || peak.free < 3));
          running[org]! -= 1;
          await finishTurn(store.db, turn.id, {
            status: 'completed',
            stopReason: 'end_turn',
            at: timestamp(),
          });
          finished.add(turn.id);
        },
        resume: async () => {},
        settleExpired: async () => {},
        settleLost: async () => {},
        leaseTtlMs: 10_000,
        adoptionWindowMs: 10_000,
        concurrency: 4,
        runningTurnLimit: (orgId) => (orgId === limited ? 2 : undefined),
        pollMs: 25,
      }),
    );
    const started = Date.now();
    for (const worker of workers) worker.start();
    while (finished.size < 9 && Date.now() - started < 20_000) await sleep(20);
    await Promise.all(workers.map((w) => w.stop()));

    expect(finished.size).toBe(9);
    expect(peak.limited).toBe(2);
    // The free organization's three turns all ran at once, beside the limited one's.
    expect(peak.free).toBe(3);
  });
});
