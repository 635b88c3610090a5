import type { ThreadListQuery, ThreadPage } from '@paddock/protocol';
import { listThreadPage } from '@paddock/store';
import type { Ctx } from '../context.ts';
import { toThread } from './thread-view.ts';

/** Where a page of threads ends: the last thread's creation time and id, as one opaque string. */
interface ThreadCursor {
  createdAt: string;
  id: string;
}

function encodeCursor(cursor: ThreadCursor): string {
  return Buffer.from(JSON.stringify([cursor.createdAt, cursor.id])).toString('base64url');
}

/** A cursor this service gave, else undefined. */
export function decodeThreadCursor(text: string): ThreadCursor | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 2 && value.every((v) => typeof v === 'string'))
      return { createdAt: value[0], id: value[1] };
  } catch {}
  return undefined;
}

/**
 * `GET /v2/threads` (beyond the spec): the threads of the caller's teams, newest first, narrowed by
 * agent and status. A thread-bound credential sees its own thread only, an agent-bound one its
 * agent's threads (as `GET /v2/threads/{id}` would answer them, but without the orchestration peers').
 * The route has refused a cursor this function cannot read.
 */
export async function listThreads(ctx: Ctx, query: ThreadListQuery): Promise<ThreadPage> {
  const { binding } = ctx.actor.credential;
  const boundAgent = binding.type === 'agent' ? binding.agentId : undefined;
  if (boundAgent && query.agent_id !== undefined && query.agent_id !== boundAgent)
    return { items: [], next_cursor: null };
  const rows = await listThreadPage(ctx.store.db, {
    teamIds: [...ctx.actor.teamIds],
    agentId: boundAgent ?? query.agent_id,
    threadId: binding.type === 'thread' ? binding.threadId : undefined,
    status: query.status,
    after: query.cursor === undefined ? undefined : decodeThreadCursor(query.cursor),
    // One more than asked: whether there is a next page.
    limit: query.limit + 1,
  });
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  return {
    items: page.map(toThread),
    next_cursor:
      rows.length > query.limit && last ? encodeCursor({ createdAt: last.created_at, id: last.id }) : null,
  };
}
