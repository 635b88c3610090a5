import { newId, type Schedule, type ScheduleCreateBody, timestamp } from '@paddock/protocol';
import {
  deleteSchedule as deleteStoredSchedule,
  findSchedule,
  insertSchedule,
  listSchedules as listStoredSchedules,
  type ScheduleRow,
} from '@paddock/store';
import { reachableAgent } from '../auth/access.ts';
import type { Ctx } from '../context.ts';
import { PaddockError } from '../errors.ts';
import { cronIssues } from './cron.ts';
import { firstDueTime } from './schedule-components.ts';

export function toSchedule(row: ScheduleRow): Schedule {
  return {
    id: row.id,
    agent_id: row.agent_id,
    name: row.name,
    cron: row.cron,
    time_zone: row.time_zone,
    input: row.input,
    enabled: row.enabled === 1,
    next_run_at: row.next_run_at,
    last_run_at: row.last_run_at,
    last_thread_id: row.last_thread_id,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

const scheduleNotFound = () => new PaddockError('schedule_not_found', 'Schedule not found');

/** `GET /agents/{agent_id}/schedules`, oldest first. */
export async function listSchedules(
  ctx: Ctx,
  { agentId }: { agentId: string },
): Promise<{ items: Schedule[] }> {
  const agent = await reachableAgent(ctx.store.db, ctx.actor, agentId);
  return { items: (await listStoredSchedules(ctx.store.db, agent.id)).map(toSchedule) };
}

/**
 * `POST /agents/{agent_id}/schedules`. The route has already answered 422 for a bad cron or time
 * zone (`cronIssues`); checked again here for any other caller. An agent-bound credential manages
 * its own agent's schedules only (a schedule fires as its agent: on a peer it would widen the
 * credential). The first due time is the first after now.
 */
export async function createSchedule(
  ctx: Ctx,
  { agentId, body }: { agentId: string; body: ScheduleCreateBody },
): Promise<Schedule> {
  const agent = await reachableAgent(ctx.store.db, ctx.actor, agentId, { peers: false });
  const [issue] = cronIssues(body.cron, body.time_zone);
  if (issue) throw new PaddockError('validation', issue.message, { extra: { field: issue.field } });
  const names = new Set((await listStoredSchedules(ctx.store.db, agent.id)).map((s) => s.name));
  if (body.name !== undefined && names.has(body.name))
    throw new PaddockError('validation', `the agent has a schedule named ${body.name}`, {
      extra: { field: 'name' },
    });
  let name = body.name;
  for (let n = names.size + 1; name === undefined; n++)
    if (!names.has(`schedule-${n}`)) name = `schedule-${n}`;
  const now = new Date(ctx.clock.now());
  const at = timestamp(now);
  const row: ScheduleRow = {
    id: newId(),
    agent_id: agent.id,
    user_id: ctx.actor.userId,
    name,
    cron: body.cron.trim(),
    time_zone: body.time_zone,
    input: body.input,
    enabled: body.enabled ? 1 : 0,
    created_at: at,
    updated_at: at,
    next_run_at: timestamp(firstDueTime(body, now)),
    last_run_at: null,
    last_thread_id: null,
  };
  await insertSchedule(ctx.store.db, row);
  return toSchedule(row);
}

/** `DELETE /agents/{agent_id}/schedules/{schedule_id}`: 404 when the agent has no such schedule. */
export async function deleteSchedule(
  ctx: Ctx,
  { agentId, scheduleId }: { agentId: string; scheduleId: string },
): Promise<void> {
  const agent = await reachableAgent(ctx.store.db, ctx.actor, agentId, { peers: false });
  if (!(await findSchedule(ctx.store.db, agent.id, scheduleId))) throw scheduleNotFound();
  await deleteStoredSchedule(ctx.store.db, agent.id, scheduleId);
}
