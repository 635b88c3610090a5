import { timestamp } from '@paddock/protocol';
import {
  countRunningTurnsByOrg,
  countRunningTurnsOfOrg,
  type Db,
  findActiveTurns,
  lockOrgForClaim,
  pickQueuedTurn,
  type QueuedTurn,
  type Store,
  startTurn,
  type TurnRow,
} from '@paddock/store';

/** What a claim decides by: the worker's options of the same names (`TurnWorkerOptions`). */
export interface ClaimOptions {
  store: Store;
  runningTurnLimit?: (orgId: string) => number | undefined;
  threadHomes?: boolean;
  node?: string;
  takesNewThreads?: () => Promise<boolean>;
}

/**
 * How a worker claims a turn under its lease, in one transaction: the oldest queued turn within the
 * organizations' limits, or (with a thread) that thread's queued turn. Answers the started turn, or
 * undefined when there was none to start.
 */
export function turnClaimer(
  options: ClaimOptions,
  owner: string,
  leaseUntil: () => string,
): (threadId?: string) => Promise<TurnRow | undefined> {
  return async (threadId) => {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        return await options.store.transaction(async (trx) => {
          const turn: TurnRow | QueuedTurn | undefined =
            threadId === undefined ? await pickWithinLimits(options, trx) : await queuedTurnOf(trx, threadId);
          if (!turn) return undefined;
          const started = await startTurn(trx, turn.id, { owner, expiresAt: leaseUntil(), at: timestamp() });
          const { org_id: _, ...row } = turn as QueuedTurn;
          return started ? { ...row, status: 'running', lease_owner: owner } : undefined;
        });
      } catch (error) {
        // Another node claimed a turn of the same thread first: the unique index refused ours.
        if (!isUniqueViolation(error)) throw error;
      }
    }
    return undefined;
  };
}

/**
 * The oldest queued turn of an organization below its running-turn limit. The organization's
 * count is taken again under its claim lock, which this transaction holds until the turn it
 * starts is committed, so concurrent claimers on any node never start one past the limit.
 */
async function pickWithinLimits(options: ClaimOptions, trx: Db): Promise<QueuedTurn | undefined> {
  const limitOf = options.runningTurnLimit;
  const { dialect } = options.store;
  const node =
    options.threadHomes && options.node
      ? { id: options.node, now: timestamp(), newThreads: (await options.takesNewThreads?.()) ?? true }
      : undefined;
  if (!limitOf) return pickQueuedTurn(trx, dialect, [], node);
  const full: string[] = [];
  for (const [orgId, running] of await countRunningTurnsByOrg(trx)) {
    const limit = limitOf(orgId);
    if (limit !== undefined && running >= limit) full.push(orgId);
  }
  for (;;) {
    const turn = await pickQueuedTurn(trx, dialect, full, node);
    const limit = turn && limitOf(turn.org_id);
    if (!turn || limit === undefined) return turn;
    await lockOrgForClaim(trx, dialect, turn.org_id);
    if ((await countRunningTurnsOfOrg(trx, turn.org_id)) < limit) return turn;
    full.push(turn.org_id);
  }
}

/**
 * The thread's queued turn, unless it runs one: its own index, not a search of every queued turn.
 * Not locked: a claimer that lost the race finds it started (`startTurn` is conditional).
 */
async function queuedTurnOf(trx: Db, threadId: string): Promise<TurnRow | undefined> {
  const active = await findActiveTurns(trx, threadId);
  return active.some((turn) => turn.status === 'running')
    ? undefined
    : active.find((turn) => turn.status === 'queued');
}

function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string; message?: string };
  return (
    e?.code === '23505' ||
    e?.code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    /UNIQUE constraint/.test(e?.message ?? '')
  );
}
