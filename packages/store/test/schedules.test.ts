import { newId, timestamp } from '@paddock/protocol';
import {
  claimScheduleRun,
  deleteSchedule,
  insertSchedule,
  listDueSchedules,
  listSchedules,
  recordScheduleThread,
  type Store,
  updateSchedule,
} from '@paddock/store';
import { openTestStore, seedThread, testDatabases } from '@paddock/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

describe.each(testDatabases())('schedules on $name', (database) => {
  let store: Store;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ store, close } = await openTestStore(database));
  });
  afterAll(() => close());

  const at = (offsetMs: number) => timestamp(new Date(Date.now() + offsetMs));
  async function seedSchedule(nextRunAt: string, enabled = 1) {
    const { agentId, userId, threadId } = await seedThread(store);
    const id = newId();
    const created = timestamp();
    await insertSchedule(store.db, {
      id,
      agent_id: agentId,
      user_id: userId,
      name: 'every-minute',
      cron: '* * * * *',
      time_zone: 'UTC',
      input: 'hello',
      enabled,
      created_at: created,
      updated_at: created,
      next_run_at: nextRunAt,
      last_run_at: null,
      last_thread_id: null,
    });
    return { id, agentId, threadId };
  }

  it('lists, finds due ones and deletes', async () => {
    const due = await seedSchedule(at(-1000));
    const later = await seedSchedule(at(60_000));
    const off = await seedSchedule(at(-1000), 0);
    const dueIds = (await listDueSchedules(store.db, timestamp())).map((s) => s.id);
    expect(dueIds).toContain(due.id);
    expect(dueIds).not.toContain(later.id);
    expect(dueIds).not.toContain(off.id);
    expect((await listSchedules(store.db, due.agentId)).map((s) => s.id)).toEqual([due.id]);
    expect(await deleteSchedule(store.db, later.agentId, due.id)).toBe(false);
    expect(await deleteSchedule(store.db, due.agentId, due.id)).toBe(true);
    expect(await listSchedules(store.db, due.agentId)).toEqual([]);
  });

  it('holds one schedule of a name per agent, and updates one in place', async () => {
    const { id, agentId } = await seedSchedule(at(60_000));
    const [row] = await listSchedules(store.db, agentId);
    await expect(insertSchedule(store.db, { ...row!, id: newId() })).rejects.toThrow();
    const next = at(3_600_000);
    await updateSchedule(store.db, id, {
      cron: '0 * * * *',
      time_zone: 'Europe/Paris',
      input: 'hourly',
      enabled: 0,
      next_run_at: next,
      updated_at: timestamp(),
    });
    expect(await listSchedules(store.db, agentId)).toEqual([
      expect.objectContaining({
        id,
        name: 'every-minute',
        cron: '0 * * * *',
        input: 'hourly',
        enabled: 0,
        next_run_at: next,
      }),
    ]);
  });

  it('lets exactly one of many concurrent claims of one due time win', async () => {
    const dueAt = at(-1000);
    const { id, agentId, threadId } = await seedSchedule(dueAt);
    const claims = await Promise.all(
      Array.from({ length: 8 }, () =>
        claimScheduleRun(store.db, { id, dueAt, nextRunAt: at(60_000), at: timestamp() }),
      ),
    );
    expect(claims.filter(Boolean)).toHaveLength(1);
    await recordScheduleThread(store.db, id, threadId);
    const [row] = await listSchedules(store.db, agentId);
    expect(row!.next_run_at > dueAt).toBe(true);
    expect(row!.last_run_at).not.toBeNull();
    expect(row!.last_thread_id).toBe(threadId);
    expect((await listDueSchedules(store.db, timestamp())).map((s) => s.id)).not.toContain(id);
  });
});
