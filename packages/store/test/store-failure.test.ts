import { isStoreFailure } from '@paddock/store';
import { openTestStore, testDatabases } from '@paddock/testing';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';

describe.each(testDatabases())('store failures on $name', (database) => {
  it("tells the database's own errors and a closed store from faults of the calling code", async () => {
    const { store, close } = await openTestStore(database);
    const failed = await sql`select * from no_such_table`.execute(store.db).catch((e: unknown) => e);
    expect(isStoreFailure(failed)).toBe(true);
    expect(isStoreFailure(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isStoreFailure(new TypeError("Cannot read properties of undefined (reading 'x')"))).toBe(false);
    expect(isStoreFailure(new RangeError('Invalid time value'))).toBe(false);
    await close();
    const closed = await store.db
      .selectFrom('threads')
      .select('id')
      .execute()
      .catch((e: unknown) => e);
    expect(isStoreFailure(closed)).toBe(true);
  });
});
