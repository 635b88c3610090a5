import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newId, timestamp } from '@paddock/protocol';
import { openStore, type Store } from '@paddock/store';
import { createPostgresDatabase, type TestDatabase } from './databases.ts';

/** A migrated store of its own on the given database, removed again by `close`. */
export async function openTestStore(
  database: TestDatabase,
): Promise<{ store: Store; close(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'paddock-store-'));
  const postgres = database.name === 'postgres' ? await createPostgresDatabase(database.adminUrl) : undefined;
  const store = await openStore({ databaseUrl: postgres?.url, dataDir });
  return {
    store,
    async close() {
      await store.close();
      await postgres?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Two server nodes' stores on one PostgreSQL database. SQLite serves one node (one process holds
 * the file), so there both "nodes" share its one store, whose transactions run one at a time.
 */
export async function openTwoNodeStores(
  database: TestDatabase,
): Promise<{ nodes: [Store, Store]; close(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'paddock-nodes-'));
  const postgres = database.name === 'postgres' ? await createPostgresDatabase(database.adminUrl) : undefined;
  const first = await openStore({ databaseUrl: postgres?.url, dataDir });
  const second = postgres ? await openStore({ databaseUrl: postgres.url, dataDir }) : first;
  return {
    nodes: [first, second],
    async close() {
      await first.close();
      if (second !== first) await second.close();
      await postgres?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Inserts a user, team, agent and thread: the rows a thread-level test needs. */
export async function seedThread(
  store: Store,
): Promise<{ threadId: string; agentId: string; userId: string; teamId: string }> {
  const at = timestamp();
  const userId = newId();
  const orgId = newId();
  const teamId = newId();
  const agentId = newId();
  const threadId = newId();
  await store.transaction(async (trx) => {
    await trx
      .insertInto('users')
      .values({ id: userId, username: `u-${userId}`, password_hash: null, created_at: at })
      .execute();
    await trx.insertInto('orgs').values({ id: orgId, name: 'o', created_at: at }).execute();
    await trx.insertInto('teams').values({ id: teamId, org_id: orgId, name: 't', created_at: at }).execute();
    await trx
      .insertInto('agents')
      .values({
        id: agentId,
        team_id: teamId,
        owner_user_id: userId,
        spec_hash: newId(),
        title: 'a',
        harness: 'coding_alpha',
        machine_kind: 'sandbox_a',
        machine_size: 'S',
        model: null,
        instructions: null,
        entrypoint: null,
        mcp_servers: '[]',
        skills: '[]',
        secrets_enc: null,
        created_at: at,
        updated_at: at,
      })
      .execute();
    await trx
      .insertInto('threads')
      .values({
        id: threadId,
        agent_id: agentId,
        team_id: teamId,
        owner_user_id: userId,
        title: 't',
        status: 'idle',
        metadata: '{}',
        group_id: null,
        created_at: at,
        updated_at: at,
      })
      .execute();
  });
  return { threadId, agentId, userId, teamId };
}

/** A queued turn of `threadId`, as a row to insert (`enqueueTurn`, or straight into `turns`). */
export function queuedTurnRow(threadId: string) {
  return {
    id: newId(),
    thread_id: threadId,
    status: 'queued',
    generation: 0,
    lease_owner: null,
    lease_expires_at: null,
    stop_reason: null,
    created_at: timestamp(),
    started_at: null,
    ended_at: null,
  };
}
