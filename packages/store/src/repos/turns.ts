import { type Selectable, sql } from 'kysely';
import type { TurnsTable } from '../schema.ts';
import type { Db, Dialect } from '../store.ts';

export type TurnRow = Selectable<TurnsTable>;

/** Queues a turn for the thread unless one is already queued (at most one waits; it takes every input). */
export async function enqueueTurn(
  db: Db,
  turn: Omit<TurnRow, 'cancel_requested' | 'runner_id' | 'event_cursor' | 'phase' | 'interruptible'>,
): Promise<boolean> {
  const result = await db
    .insertInto('turns')
    .values(turn)
    .onConflict((oc) => oc.column('thread_id').where(sql<boolean>`status = 'queued'`).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

export function findTurn(db: Db, id: string): Promise<TurnRow | undefined> {
  return db.selectFrom('turns').selectAll().where('id', '=', id).executeTakeFirst();
}

export function findActiveTurns(db: Db, threadId: string): Promise<TurnRow[]> {
  return db
    .selectFrom('turns')
    .selectAll()
    .where('thread_id', '=', threadId)
    .where('status', 'in', ['queued', 'running'])
    .orderBy('created_at')
    .execute();
}

/** A queued turn with the organization it would run for (per-organization limits). */
export type QueuedTurn = TurnRow & { org_id: string };

/**
 * Picks the oldest queued turn whose thread has none running, skipping the threads of `skipOrgs`
 * (organizations running their limit). On PostgreSQL the turn row is locked with SKIP LOCKED so
 * concurrent nodes pick different turns; the partial unique index on running turns is the final
 * guard that a thread never runs two at once.
 */
export async function pickQueuedTurn(
  db: Db,
  dialect: Dialect,
  skipOrgs: readonly string[] = [],
  /**
   * Leaves the turns of threads whose machine another live node reaches (they run there); without
   * `newThreads` (this node has no runner for them), also those of threads it does not reach.
   */
  node?: { id: string; now: string; newThreads: boolean },
): Promise<QueuedTurn | undefined> {
  let query = db
    .selectFrom('turns as t')
    .innerJoin('threads as th', 'th.id', 't.thread_id')
    .innerJoin('teams as tm', 'tm.id', 'th.team_id')
    .selectAll('t')
    .select('tm.org_id')
    .where('t.status', '=', 'queued')
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('turns as r')
            .select(sql.lit(1).as('one'))
            .whereRef('r.thread_id', '=', 't.thread_id')
            .where('r.status', '=', 'running'),
        ),
      ),
    )
    .orderBy('t.created_at')
    .limit(1);
  if (skipOrgs.length > 0) query = query.where('tm.org_id', 'not in', [...skipOrgs]);
  if (node)
    query = query.where((eb) => {
      const reached = (on: '=' | '!=') =>
        eb
          .selectFrom('machines as m')
          .select(sql.lit(1).as('one'))
          .whereRef('m.machine_id', '=', 'th.machine_id')
          .where('m.node_id', on, node.id)
          .where('m.seen_until', '>', node.now);
      return node.newThreads ? eb.not(eb.exists(reached('!='))) : eb.exists(reached('='));
    });
  // Only the turn row: the thread row stays free for the verbs that lock it.
  if (dialect === 'postgres') query = query.forUpdate('t').skipLocked();
  return query.executeTakeFirst();
}

/** Running turns per organization, for the organizations that have any. */
export async function countRunningTurnsByOrg(db: Db): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('turns as t')
    .innerJoin('threads as th', 'th.id', 't.thread_id')
    .innerJoin('teams as tm', 'tm.id', 'th.team_id')
    .select(['tm.org_id', (eb) => eb.fn.countAll<number | string>().as('running')])
    .where('t.status', '=', 'running')
    .groupBy('tm.org_id')
    .execute();
  return new Map(rows.map((r) => [r.org_id, Number(r.running)]));
}

/**
 * Takes the organization's claim lock for the rest of the transaction, so two nodes never both start
 * the turn that goes past its limit: on PostgreSQL a row lock on the organization (NO KEY, so rows
 * that reference it are not held up), which the next claimer waits for and then counts afresh
 * (each statement of a READ COMMITTED transaction sees what committed before it); SQLite has one
 * writer and a transaction that read before another committed cannot write, so it needs none.
 */
export async function lockOrgForClaim(db: Db, dialect: Dialect, orgId: string): Promise<void> {
  if (dialect !== 'postgres') return;
  await db.selectFrom('orgs').select('id').where('id', '=', orgId).forNoKeyUpdate().execute();
}

export async function countRunningTurnsOfOrg(db: Db, orgId: string): Promise<number> {
  const row = await db
    .selectFrom('turns as t')
    .innerJoin('threads as th', 'th.id', 't.thread_id')
    .innerJoin('teams as tm', 'tm.id', 'th.team_id')
    .select((eb) => eb.fn.countAll<number | string>().as('running'))
    .where('t.status', '=', 'running')
    .where('tm.org_id', '=', orgId)
    .executeTakeFirstOrThrow();
  return Number(row.running);
}

export async function startTurn(
  db: Db,
  id: string,
  lease: { owner: string; expiresAt: string; at: string },
): Promise<boolean> {
  const result = await db
    .updateTable('turns')
    .set({
      status: 'running',
      lease_owner: lease.owner,
      lease_expires_at: lease.expiresAt,
      started_at: lease.at,
    })
    .where('id', '=', id)
    .where('status', '=', 'queued')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Extends a lease the owner still holds; answers whether a cancel was requested, or undefined if lost. */
export async function renewLease(
  db: Db,
  id: string,
  owner: string,
  expiresAt: string,
): Promise<{ cancelRequested: boolean } | undefined> {
  const row = await db
    .updateTable('turns')
    .set({ lease_expires_at: expiresAt })
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .where('status', '=', 'running')
    .returning('cancel_requested')
    .executeTakeFirst();
  return row ? { cancelRequested: row.cancel_requested === 1 } : undefined;
}

export async function finishTurn(
  db: Db,
  id: string,
  patch: { status: 'completed' | 'cancelled' | 'failed'; stopReason: string; at: string },
): Promise<void> {
  await db
    .updateTable('turns')
    .set({ status: patch.status, stop_reason: patch.stopReason, ended_at: patch.at, lease_owner: null })
    .where('id', '=', id)
    .execute();
}

export async function requestCancel(db: Db, id: string): Promise<void> {
  await db.updateTable('turns').set({ cancel_requested: 1 }).where('id', '=', id).execute();
}

/**
 * The running turn's result is back and only its settle remains: a Stop now could no longer change
 * how it ends, so it answers `turn_interrupt_pending` until the settle commits.
 */
export async function markTurnFinalizing(db: Db, id: string): Promise<void> {
  await db
    .updateTable('turns')
    .set({ phase: 'finalizing' })
    .where('id', '=', id)
    .where('status', '=', 'running')
    .execute();
}

/** The runtime running the turn cannot interrupt it safely: a Stop refuses instead of cancelling. */
export async function markTurnUninterruptible(db: Db, id: string): Promise<void> {
  await db.updateTable('turns').set({ interruptible: 0 }).where('id', '=', id).execute();
}

/**
 * Running turns nobody renews: on the in-process runner as soon as the lease expired, or at once
 * when a dead predecessor of this node held it (`predecessors`: owners with this prefix but the
 * live one); on a detached runner once it expired before `adoptionCutoff` (no restarted server
 * adopted it in the window).
 */
export function findExpiredRunningTurns(
  db: Db,
  at: { now: string; adoptionCutoff: string; predecessors?: { prefix: string; except: string } },
): Promise<TurnRow[]> {
  const { predecessors } = at;
  return db
    .selectFrom('turns')
    .selectAll()
    .where('status', '=', 'running')
    .where((eb) =>
      eb.or([
        eb.and([eb('runner_id', 'is', null), eb('lease_expires_at', '<', at.now)]),
        eb('lease_expires_at', '<', at.adoptionCutoff),
        ...(predecessors
          ? [
              eb.and([
                eb('runner_id', 'is', null),
                eb('lease_owner', 'like', `${predecessors.prefix}%`),
                eb('lease_owner', '!=', predecessors.except),
              ]),
            ]
          : []),
      ]),
    )
    .orderBy('created_at')
    .limit(100)
    .execute();
}

/** A server takes over a running turn its detached runner still holds; undefined if it is over. */
export function adoptTurn(
  db: Db,
  id: string,
  lease: { owner: string; expiresAt: string; runnerId: string },
): Promise<TurnRow | undefined> {
  return db
    .updateTable('turns')
    .set({ lease_owner: lease.owner, lease_expires_at: lease.expiresAt, runner_id: lease.runnerId })
    .where('id', '=', id)
    .where('status', '=', 'running')
    .returningAll()
    .executeTakeFirst();
}

export function findRunningTurnsOn(db: Db, runnerId: string): Promise<TurnRow[]> {
  return db
    .selectFrom('turns')
    .selectAll()
    .where('status', '=', 'running')
    .where('runner_id', '=', runnerId)
    .execute();
}

export async function setRunner(db: Db, id: string, runnerId: string | null): Promise<void> {
  await db.updateTable('turns').set({ runner_id: runnerId }).where('id', '=', id).execute();
}

export async function setEventCursor(db: Db, id: string, index: number): Promise<void> {
  await db.updateTable('turns').set({ event_cursor: index }).where('id', '=', id).execute();
}
