import { type Scope, timestamp } from '@paddock/protocol';
import {
  claimScheduleRun,
  listDueSchedules,
  listTeamIds,
  recordScheduleThread,
  revokeLiveToken,
  type ScheduleRow,
} from '@paddock/store';
import { mintToken } from '../auth/mint-token.ts';
import { type Actor, type Clock, type Services, systemClock } from '../context.ts';
import { createThread } from '../threads/create-thread.ts';
import { nextCronTime } from './cron.ts';

type FireServices = Pick<
  Services,
  'store' | 'log' | 'providers' | 'secrets' | 'network' | 'sandboxLimits' | 'turnQueue' | 'turnTrace'
>;

/** Where a schedule whose expression no longer comes due is parked (it is never due again). */
const never = '9999-12-31T23:59:59.999000';
/** What the token minted for a fire may do: start a thread of its agent, as an agent key may. */
const triggerScopes: Scope[] = ['read', 'publish'];

/**
 * Fires every enabled schedule that is due: claims each due time (moving `next_run_at` on to the
 * first due time after now, only if it still holds the value read, so of all nodes polling the
 * same database exactly one fires it), then starts one thread on the agent. A schedule whose due
 * times passed while no server ran is due once: its next time is computed from now, not from each
 * missed one. Answers how many threads this call started.
 */
export async function fireDueSchedules(services: FireServices, clock: Clock = systemClock): Promise<number> {
  const now = new Date(clock.now());
  const due = await listDueSchedules(services.store.db, timestamp(now));
  let started = 0;
  for (const schedule of due) {
    let next: string;
    try {
      const time = nextCronTime(schedule.cron, schedule.time_zone, now);
      next = time ? timestamp(time) : never;
    } catch {
      next = never;
    }
    const won = await claimScheduleRun(services.store.db, {
      id: schedule.id,
      dueAt: schedule.next_run_at,
      nextRunAt: next,
      at: timestamp(now),
    });
    if (won && (await fireSchedule(services, clock, schedule))) started += 1;
  }
  return started;
}

/**
 * One fire (spec, Authentication 12): the service mints an agent-bound token for the schedule's
 * agent, on behalf of the user who made the schedule, and starts the thread with it exactly as
 * `POST /v2/threads` with an agent key would (the same access checks and limits). The token's work
 * ends with the thread created (the thread's sandbox gets its own thread token), so it is revoked
 * then. A fire that fails (the user lost access, the sandbox limit) is logged, not retried.
 */
async function fireSchedule(services: FireServices, clock: Clock, schedule: ScheduleRow): Promise<boolean> {
  const { store, log } = services;
  const minted = await mintToken(store.db, {
    kind: 'agent',
    userId: schedule.user_id,
    name: `schedule ${schedule.id}`,
    scopes: triggerScopes,
    agentId: schedule.agent_id,
    createdAt: timestamp(new Date(clock.now())),
  });
  try {
    const actor: Actor = {
      userId: schedule.user_id,
      teamIds: new Set(await listTeamIds(store.db, schedule.user_id)),
      credential: {
        id: minted.id,
        kind: 'agent',
        scopes: new Set(triggerScopes),
        binding: { type: 'agent', agentId: schedule.agent_id },
      },
    };
    const handle = await createThread({ actor, store, clock, log }, services, {
      input: {
        agent_id: schedule.agent_id,
        input: schedule.input,
        metadata: { schedule_id: schedule.id, scheduled_for: schedule.next_run_at },
      },
    });
    await recordScheduleThread(store.db, schedule.id, handle.thread_id);
    log.info({ schedule_id: schedule.id, thread_id: handle.thread_id }, 'schedule fired');
    return true;
  } catch (error) {
    log.warn({ err: error, schedule_id: schedule.id }, 'schedule fire failed to start a thread');
    return false;
  } finally {
    await revokeLiveToken(store.db, minted.id, timestamp(new Date(clock.now())));
  }
}
