import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newId, timestamp } from '@paddock/protocol';
import {
  findTokenByHash,
  insertTeamMember,
  insertToken,
  openStore,
  revokeToken,
  type Store,
} from '@paddock/store';
import { openTestStore, seedThread, testDatabases } from '@paddock/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

describe.each(testDatabases())('the credential tables’ version on $name', (database) => {
  let store: Store;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ store, close } = await openTestStore(database));
  });
  afterAll(() => close());

  it('changes with every write to tokens or team_members, in a transaction or not, and with nothing else', async () => {
    const version = () => store.credentialVersion?.();
    if (database.name === 'postgres') {
      // Other nodes commit there unseen: nothing may be cached on a version.
      expect(version()).toBeUndefined();
      return;
    }
    const { userId, teamId, threadId } = await seedThread(store);
    const tokenId = newId();
    let before = version();
    await insertToken(store.db, {
      id: tokenId,
      kind: 'personal',
      user_id: userId,
      name: 'n',
      prefix: 'pdk_x',
      token_hash: `hash-${tokenId}`,
      scopes: 'read',
      agent_id: null,
      thread_id: null,
      created_at: timestamp(),
      expires_at: null,
      revoked_at: null,
      holder: null,
    });
    expect(version()).not.toBe(before);

    // Reads and writes elsewhere leave it.
    before = version();
    await findTokenByHash(store.db, `hash-${tokenId}`);
    await store.db.updateTable('threads').set({ title: 'renamed' }).where('id', '=', threadId).execute();
    expect(version()).toBe(before);

    await store.transaction((trx) => revokeToken(trx, tokenId, timestamp()));
    expect(version()).not.toBe(before);

    before = version();
    const otherTeam = newId();
    const { org_id } = await store.db
      .selectFrom('teams')
      .select('org_id')
      .where('id', '=', teamId)
      .executeTakeFirstOrThrow();
    await store.db
      .insertInto('teams')
      .values({ id: otherTeam, org_id, name: 'u', created_at: timestamp() })
      .execute();
    expect(version()).toBe(before);
    await insertTeamMember(store.db, {
      team_id: otherTeam,
      user_id: userId,
      role: 'member',
      created_at: timestamp(),
    });
    expect(version()).not.toBe(before);
  });

  it.skipIf(database.name !== 'sqlite')(
    'changes when another connection to the same file commits, and is none once the store is closed',
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'paddock-version-'));
      const first = await openStore({ dataDir });
      const second = await openStore({ dataDir });
      try {
        const before = first.credentialVersion!();
        await seedThread(second);
        expect(first.credentialVersion!()).not.toBe(before);
        await second.close();
        expect(second.credentialVersion!()).toBeUndefined();
      } finally {
        await second.close();
        await first.close();
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  );
});
