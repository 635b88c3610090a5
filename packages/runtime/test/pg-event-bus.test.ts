import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ThreadEvent } from '@paddock/protocol';
import {
  createEventLog,
  createPgListener,
  createPostgresEventBus,
  type EventLog,
  eventBusChannel,
  type PgListener,
  type PostgresEventBus,
} from '@paddock/runtime';
import { createListenClient, openStore, type Store } from '@paddock/store';
import { createPostgresDatabase, seedThread, testDatabases } from '@paddock/testing';
import { sql } from 'kysely';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

/** The backend pid of a connected client (pg sets it, its types leave it out). */
const processId = (client: pg.Client) => (client as unknown as { processID: number }).processID;

const postgres = testDatabases().find((database) => database.name === 'postgres');

interface Node {
  store: Store;
  bus: PostgresEventBus;
  listener: PgListener;
  log: EventLog;
  /** Every LISTEN client the node's listener made, newest last. */
  clients: pg.Client[];
  warnings: string[];
  /** Set by a test to hold the next LISTEN connection until it resolves. */
  reconnect?: Promise<void>;
}

/**
 * Issue 18: server nodes on one PostgreSQL database, each with its own store (pool) and bus, see
 * each other's events: in order, with no gap and no duplicate.
 */
describe.skipIf(!postgres)('PostgreSQL event bus across nodes', () => {
  let database: { url: string; drop(): Promise<void> };
  let dataDir: string;
  const nodes: Node[] = [];

  async function startNode(): Promise<Node> {
    const store = await openStore({ databaseUrl: database.url, dataDir });
    const clients: pg.Client[] = [];
    const warnings: string[] = [];
    let node!: Node;
    const log = { warn: (_: object, msg: string) => warnings.push(msg) };
    const listener = createPgListener({
      channels: [eventBusChannel],
      log,
      listenClient() {
        const client = createListenClient(database.url);
        clients.push(client);
        // While the test holds `node.reconnect`, a new connection waits for it.
        const held = node?.reconnect;
        if (held) {
          const connect = client.connect.bind(client);
          client.connect = (async () => {
            await held;
            return connect();
          }) as typeof client.connect;
        }
        return client;
      },
    });
    const bus = createPostgresEventBus({ store, listener, log });
    node = { store, bus, listener, log: createEventLog(store, bus), clients, warnings };
    nodes.push(node);
    return node;
  }

  beforeAll(async () => {
    database = await createPostgresDatabase(postgres!.name === 'postgres' ? postgres!.adminUrl : '');
    dataDir = mkdtempSync(join(tmpdir(), 'paddock-pg-bus-'));
  });
  afterAll(async () => {
    for (const node of nodes) {
      await node.bus.close();
      await node.listener.close();
      await node.store.close();
    }
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const draft = (i: number) => ({ type: 'plan.update' as const, data: { entries: [i] } });
  const seqs = (events: ThreadEvent[]) => events.map((e) => e.seq);
  const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
  const received = (bus: PostgresEventBus, threadId: string) => {
    const events: ThreadEvent[] = [];
    const unsubscribe = bus.subscribe(threadId, (event) => events.push(event));
    return { events, unsubscribe };
  };
  /** Waits until `events` holds seqs up to `last`; then they must be exactly `from`..`last`, in order. */
  async function receivedExactly(events: ThreadEvent[], from: number, last: number) {
    await vi.waitFor(() => expect(events.at(-1)?.seq).toBe(last), { timeout: 15_000, interval: 20 });
    expect(seqs(events)).toEqual(range(from, last));
  }

  it("delivers another node's events in order, once each, with their stored content", async () => {
    const [a, b] = [await startNode(), await startNode()];
    const { threadId } = await seedThread(a.store);
    const onB = received(b.bus, threadId);
    const onA = received(a.bus, threadId);
    for (let i = 0; i < 30; i++) await a.log.append(threadId, null, [draft(i)]);
    await a.log.append(threadId, null, range(30, 69).map(draft));
    await receivedExactly(onB.events, 1, 70);
    await receivedExactly(onA.events, 1, 70);
    expect(onB.events).toEqual(await a.log.after(threadId, 0, 1000));
    onA.unsubscribe();
    onB.unsubscribe();
    expect(b.warnings).toEqual([]);
  });

  it('keeps a burst from two appenders on two nodes gapless on both, and for subscribers that join mid-burst', async () => {
    const [a, b, c] = [nodes[0]!, nodes[1]!, await startNode()];
    const { threadId } = await seedThread(a.store);
    const onA = received(a.bus, threadId);
    const onB = received(b.bus, threadId);
    // Each appender appends 1..3 events at a time, so that its notifications coalesce and interleave;
    // it waits between appends while `pause` is set.
    let pause: { until: Promise<void>; parked: number } | undefined;
    const appender = async (log: EventLog, count: number) => {
      for (let i = 0; i < count; ) {
        if (pause) {
          pause.parked++;
          await pause.until;
        }
        const n = Math.min(count - i, 1 + (i % 3));
        await log.append(threadId, null, range(i, i + n - 1).map(draft));
        i += n;
      }
    };
    const burst = Promise.all([appender(a.log, 1500), appender(b.log, 1500)]);
    const stored = async () => (await a.log.ordered(threadId, 1, true))[0]?.seq ?? 0;
    await vi.waitFor(async () => expect(await stored()).toBeGreaterThan(500), {
      timeout: 20_000,
      interval: 10,
    });
    // Joiners, with no append under way (notifications of earlier ones may still be on their way): one
    // on a node already following the thread, one on a node that follows nothing yet.
    let resume!: () => void;
    const paused = { until: new Promise<void>((resolve) => (resume = resolve)), parked: 0 };
    pause = paused;
    await vi.waitFor(() => expect(paused.parked).toBe(2));
    const lateOnB = received(b.bus, threadId);
    const lateOnC = received(c.bus, threadId);
    const atJoin = await stored();
    pause = undefined;
    resume();
    await burst;
    await receivedExactly(onA.events, 1, 3000);
    await receivedExactly(onB.events, 1, 3000);
    // A late subscriber gets every event stored after it joined (and perhaps a few before): once
    // each, in order.
    for (const late of [lateOnB, lateOnC]) {
      const first = late.events[0]!.seq;
      expect(first).toBeLessThanOrEqual(atJoin + 1);
      await receivedExactly(late.events, first, 3000);
    }
    expect(seqs(await a.log.after(threadId, 0, 5000))).toEqual(range(1, 3000));
    for (const sub of [onA, onB, lateOnB, lateOnC]) sub.unsubscribe();
  }, 120_000);

  it('catches up what was stored while its LISTEN connection was down', async () => {
    const [a, b] = [nodes[0]!, nodes[1]!];
    const { threadId } = await seedThread(a.store);
    const onB = received(b.bus, threadId);
    await a.log.append(threadId, null, [draft(0)]);
    await receivedExactly(onB.events, 1, 1);
    const before = b.clients.length;
    let release!: () => void;
    b.reconnect = new Promise((resolve) => (release = resolve));
    // The backend of B's LISTEN connection is terminated, and B's next connection held until A has
    // appended: B hears nothing of these appends, and gets them from the log once it listens again.
    await sql`select pg_terminate_backend(${processId(b.clients.at(-1)!)})`.execute(a.store.db);
    await vi.waitFor(() => expect(b.warnings).toContain('the LISTEN connection dropped; reconnecting'));
    for (let i = 1; i < 20; i++) await a.log.append(threadId, null, [draft(i)]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(seqs(onB.events)).toEqual([1]);
    b.reconnect = undefined;
    release();
    await receivedExactly(onB.events, 1, 20);
    expect(b.clients.length).toBeGreaterThan(before);
    // And the new connection carries what comes next.
    for (let i = 20; i < 40; i++) await a.log.append(threadId, null, [draft(i)]);
    await receivedExactly(onB.events, 1, 40);
    onB.unsubscribe();
  });

  it('closes cleanly: no LISTEN session is left behind', async () => {
    const node = await startNode();
    await vi.waitFor(() => expect(processId(node.clients.at(-1)!)).toBeGreaterThan(0));
    const pid = processId(node.clients.at(-1)!);
    // As the server closes: the bus, then the node's listener.
    await node.bus.close();
    await node.listener.close();
    await vi.waitFor(async () => {
      const { rows } = await sql<{
        n: number;
      }>`select count(*)::int as n from pg_stat_activity where pid = ${pid}`.execute(nodes[0]!.store.db);
      expect(rows[0]!.n).toBe(0);
    });
  });
});
