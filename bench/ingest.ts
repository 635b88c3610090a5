import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { turnEventWriter } from '../packages/core/src/turns/event-writer.ts';
import { createEventLog, createInProcessEventBus } from '../packages/runtime/src/index.ts';
import { openStore, type Store } from '../packages/store/src/index.ts';
import { createPostgresDatabase } from '../packages/testing/src/databases.ts';
import { seedThread } from '../packages/testing/src/test-store.ts';

/**
 * Streaming chunks stored per second: a turn's chunks emitted as fast as a harness could send them,
 * through the same writer the turn executor stores them with (batched transactions, gapless seqs),
 * until the last is committed. On SQLite, and on PostgreSQL when `adminUrl` names a server (a
 * database is made for the run and dropped after). With `nodes` (PostgreSQL), that many stores of
 * their own (a node's connection pool each) write a turn each at once, and the rate is their sum.
 */
export async function measureIngest(
  database: 'sqlite' | 'postgres',
  options: { adminUrl?: string; chunks: number; nodes?: number },
): Promise<{ chunks_per_s: number; chunks: number }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'paddock-bench-ingest-'));
  const postgres = database === 'postgres' ? await createPostgresDatabase(options.adminUrl!) : undefined;
  const stores: Store[] = [];
  try {
    for (let i = 0; i < (options.nodes ?? 1); i++)
      stores.push(await openStore({ databaseUrl: postgres?.url, dataDir: join(dataDir, String(i)) }));
    const threads = await Promise.all(stores.map(async (store) => ({ store, ...(await seedThread(store)) })));
    const runAll = async (count: number) => {
      const started = performance.now();
      await Promise.all(threads.map(({ store, threadId }) => writeChunks(store, threadId, count)));
      return performance.now() - started;
    };
    await runAll(Math.min(2000, options.chunks)); // warm-up: JIT, statement caches
    const ms = await runAll(options.chunks);
    const chunks = options.chunks * stores.length;
    return { chunks_per_s: Math.round((chunks / ms) * 1000), chunks };
  } finally {
    for (const store of stores) await store.close();
    await postgres?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function writeChunks(store: Store, threadId: string, count: number): Promise<void> {
  const writer = turnEventWriter(
    createEventLog(store, createInProcessEventBus()),
    threadId,
    'bench-turn',
    (error) => {
      throw error;
    },
  );
  for (let i = 0; i < count; i++) {
    void writer.write({
      type: 'assistant.message.chunk',
      data: { content: [{ type: 'text', content: `token ${i} ` }] },
    });
  }
  await writer.flushed();
}
