import { type MachineKind, timestamp } from '@paddock/protocol';
import {
  countLiveSandboxes,
  type Db,
  findAgent,
  findTeam,
  lockOrgForSandboxes,
  markSandboxLive as markLive,
  releaseSandboxLive,
  renewSandboxesLive,
  sandboxLiveUntil,
  type ThreadRow,
} from '@paddock/store';
import type { Services } from '../context.ts';
import { PaddockError } from '../errors.ts';

/** The deployment's limit on each organization's live sandboxes (deployment config `limits`). */
export interface SandboxLimits {
  /** The most live sandboxes the organization may have (undefined: no limit); absent, none has one. */
  liveSandboxes?: (orgId: string) => number | undefined;
  /** A sandbox counts as live this long after its host last said it runs (the run lease's TTL). */
  leaseMs: number;
}

/** Sandboxes on their owners' machines (self-hosted runners) use none of the deployment's. */
const uncountedKinds: MachineKind[] = ['sandbox_e'];

/**
 * Admits one more live sandbox for the organization, in the open transaction, or refuses with 429
 * `sandbox_limit_reached`. `thread.id` is absent for a thread being created; a thread whose sandbox
 * is live already is admitted. The count comes from the database (every node's sandboxes, and every
 * thread with a turn queued or running, which will boot one), under a lock on the organization's
 * row held to the end of the transaction, so concurrent admissions on any node count each other.
 */
export async function admitSandbox(
  trx: Db,
  limits: SandboxLimits,
  thread: { id?: string; team_id: string },
  kind: MachineKind,
): Promise<void> {
  if (uncountedKinds.includes(kind) || !limits.liveSandboxes) return;
  const team = await findTeam(trx, thread.team_id);
  const limit = team && limits.liveSandboxes(team.org_id);
  if (!team || limit === undefined) return;
  const at = timestamp();
  if (thread.id) {
    const liveUntil = await sandboxLiveUntil(trx, thread.id);
    if (liveUntil !== undefined && liveUntil > at) return;
  }
  await lockOrgForSandboxes(trx, team.org_id);
  const live = await countLiveSandboxes(trx, {
    orgId: team.org_id,
    exceptThreadId: thread.id,
    exceptKinds: uncountedKinds,
    at,
  });
  if (live < limit) return;
  throw new PaddockError(
    'sandbox_limit_reached',
    `the organization has reached its limit of ${limit} live sandboxes (deployment config limits.live_sandboxes); retry once one of its sandboxes stops (idle sandboxes stop on their own)`,
  );
}

/** A new turn on a settled thread: its sandbox may have stopped while idle and boot again. */
export async function admitThreadSandbox(trx: Db, limits: SandboxLimits, thread: ThreadRow): Promise<void> {
  if (!limits.liveSandboxes) return;
  const agent = await findAgent(trx, thread.agent_id);
  if (agent) await admitSandbox(trx, limits, thread, agent.machine_kind as MachineKind);
}

/** The thread's sandbox is booting: it counts as live from now on (see `renewLiveSandboxes`). */
export async function markSandboxLive(db: Db, limits: SandboxLimits, threadId: string): Promise<void> {
  await markLive(db, threadId, timestamp(new Date(Date.now() + limits.leaseMs)));
}

/** The thread's sandbox stopped: it no longer counts. */
export function releaseSandbox(db: Db, threadId: string): Promise<void> {
  return releaseSandboxLive(db, threadId);
}

/**
 * The sandboxes this node's hosts run (or boot) count as live for another lease; run every third of
 * a lease. A node that dies stops renewing, so its sandboxes stop counting one lease later.
 */
export async function renewLiveSandboxes(
  services: Pick<Services, 'store' | 'sandboxes' | 'sandboxLimits'>,
): Promise<void> {
  const threadIds = services.sandboxes.liveThreadIds();
  const until = timestamp(new Date(Date.now() + services.sandboxLimits.leaseMs));
  await renewSandboxesLive(services.store.db, threadIds, until);
}
