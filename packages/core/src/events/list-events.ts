import type { EventRecord, ThreadEvent } from '@paddock/protocol';
import type { ThreadRow } from '@paddock/store';
import { reachableThread } from '../auth/access.ts';
import type { Ctx, Services } from '../context.ts';

/** `GET /v2/threads/{id}/events`: a page in seq order; `next_cursor` is the seq to pass as `after`. */
export async function listThreadEvents(
  ctx: Ctx,
  services: Pick<Services, 'events'>,
  { threadId, after, limit }: { threadId: string; after: number; limit: number },
): Promise<{ items: EventRecord[]; next_cursor: string | null }> {
  const thread = await reachableThread(ctx.store.db, ctx.actor, threadId);
  const events = await services.events.after(threadId, after, limit + 1);
  const page = events.slice(0, limit);
  return {
    items: page.map((e) => toEventRecord(e, thread)),
    next_cursor: events.length > limit ? String(page.at(-1)!.seq) : null,
  };
}

/** `GET /v2/tasks/{id}/events`: the spec's event records, oldest first or, with `desc`, newest first. */
export async function listTaskEvents(
  ctx: Ctx,
  services: Pick<Services, 'events'>,
  { taskId, limit, desc }: { taskId: string; limit: number; desc: boolean },
): Promise<{ items: EventRecord[] }> {
  const thread = await reachableThread(ctx.store.db, ctx.actor, taskId);
  const events = await services.events.ordered(taskId, limit, desc);
  return { items: events.map((e) => toEventRecord(e, thread)) };
}

/** A stored event as both listings answer it (spec: "Event record"). */
function toEventRecord(event: ThreadEvent, thread: ThreadRow): EventRecord {
  return {
    id: event.id,
    event_id: String(event.seq),
    seq: event.seq,
    received_at: event.ts,
    ts: event.ts,
    started_at: null,
    ended_at: null,
    type: event.type,
    tool_id: event.tool_id,
    subagent_id: null,
    session_id: null,
    turn_id: event.turn_id,
    agent_id: thread.agent_id,
    task_id: thread.id,
    thread_id: thread.id,
    team_id: thread.team_id,
    group_id: thread.group_id,
    orchestration_id: null,
    data: event.data,
  };
}
