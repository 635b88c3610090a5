import type { Db } from '../store.ts';

/**
 * Serializes the admissions of an organization's sandboxes (a count, then a write) across
 * transactions and server nodes: the organization's row is locked until the transaction ends.
 */
export async function lockOrgForSandboxes(db: Db, orgId: string): Promise<void> {
  await db
    .updateTable('orgs')
    .set((eb) => ({ name: eb.ref('name') }))
    .where('id', '=', orgId)
    .execute();
}

/**
 * The organization's live sandboxes besides `exceptThreadId`'s: threads whose sandbox a host vouched
 * for until after `at`, and threads with a turn queued or running (it boots one if none runs).
 * Threads of the providers in `exceptKinds` do not count.
 */
export async function countLiveSandboxes(
  db: Db,
  options: { orgId: string; exceptThreadId?: string; exceptKinds: string[]; at: string },
): Promise<number> {
  let query = db
    .selectFrom('threads')
    .innerJoin('teams', 'teams.id', 'threads.team_id')
    .innerJoin('agents', 'agents.id', 'threads.agent_id')
    .where('teams.org_id', '=', options.orgId)
    .where((eb) =>
      eb.or([
        eb.exists(
          eb
            .selectFrom('live_sandboxes')
            .select('live_sandboxes.thread_id')
            .whereRef('live_sandboxes.thread_id', '=', 'threads.id')
            .where('live_sandboxes.live_until', '>', options.at),
        ),
        eb.exists(
          eb
            .selectFrom('turns')
            .select('turns.id')
            .whereRef('turns.thread_id', '=', 'threads.id')
            .where('turns.status', 'in', ['queued', 'running']),
        ),
      ]),
    );
  if (options.exceptThreadId) query = query.where('threads.id', '<>', options.exceptThreadId);
  if (options.exceptKinds.length > 0)
    query = query.where('agents.machine_kind', 'not in', options.exceptKinds);
  const row = await query
    .select((eb) => eb.fn.countAll<number | string>().as('live'))
    .executeTakeFirstOrThrow();
  return Number(row.live);
}

/** Until when a host vouched for the thread's sandbox; undefined (or empty, released) when none does. */
export async function sandboxLiveUntil(db: Db, threadId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('live_sandboxes')
    .select('live_until')
    .where('thread_id', '=', threadId)
    .executeTakeFirst();
  return row?.live_until;
}

/** Written in `live_until` when a sandbox stopped: sorts before every time, so it never counts. */
const released = '';

/**
 * A boot was admitted: the thread's sandbox counts as live until `until`. Which sandbox it is is
 * known once the boot is up (`recordLiveSandbox`).
 */
export async function markSandboxLive(db: Db, threadId: string, until: string): Promise<void> {
  await db
    .insertInto('live_sandboxes')
    .values({ thread_id: threadId, live_until: until })
    .onConflict((oc) =>
      oc.column('thread_id').doUpdateSet({ live_until: until, sandbox_id: null, machine_id: null }),
    )
    .execute();
}

/**
 * The thread's sandbox is up on `machineId`. A sandbox this boot started (`booted`) is `sandboxId`;
 * one that was running already keeps the id recorded, or takes `sandboxId` if none is.
 */
export async function recordLiveSandbox(
  db: Db,
  threadId: string,
  sandbox: { sandboxId: string; machineId: string; booted: boolean },
): Promise<void> {
  await db
    .updateTable('live_sandboxes')
    .set((eb) => ({
      machine_id: sandbox.machineId,
      sandbox_id: sandbox.booted
        ? sandbox.sandboxId
        : eb.fn.coalesce('sandbox_id', eb.val(sandbox.sandboxId)),
    }))
    .where('thread_id', '=', threadId)
    .execute();
}

/** The thread's sandbox a host vouches for at `at`, if any, and the machine it runs on. */
export function findLiveSandbox(
  db: Db,
  threadId: string,
  at: string,
): Promise<{ sandbox_id: string | null; machine_id: string | null } | undefined> {
  return db
    .selectFrom('live_sandboxes')
    .select(['sandbox_id', 'machine_id'])
    .where('thread_id', '=', threadId)
    .where('live_until', '>', at)
    .executeTakeFirst();
}

/**
 * The hosts vouch for these threads' sandboxes until `until`. A sandbox released since the host
 * listed it stays released: only an admitted boot (`markSandboxLive`) counts it again.
 */
export async function renewSandboxesLive(db: Db, threadIds: string[], until: string): Promise<void> {
  if (threadIds.length === 0) return;
  await db
    .insertInto('live_sandboxes')
    .values(threadIds.map((threadId) => ({ thread_id: threadId, live_until: until })))
    .onConflict((oc) =>
      oc
        .column('thread_id')
        .doUpdateSet({ live_until: until })
        .where('live_sandboxes.live_until', '<>', released),
    )
    .execute();
}

/** The thread's sandbox stopped: it no longer counts, and renewals racing with the stop do not revive it. */
export async function releaseSandboxLive(db: Db, threadId: string): Promise<void> {
  await db
    .updateTable('live_sandboxes')
    .set({ live_until: released })
    .where('thread_id', '=', threadId)
    .execute();
}
