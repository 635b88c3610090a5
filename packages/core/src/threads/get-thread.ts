import type { Thread, TranscriptMessage } from '@paddock/protocol';
import { listMessages, type MessageRow } from '@paddock/store';
import { reachableThread } from '../auth/access.ts';
import type { Ctx } from '../context.ts';
import { toThread } from './thread-view.ts';

export async function getThread(ctx: Ctx, { threadId }: { threadId: string }): Promise<Thread> {
  return toThread(await reachableThread(ctx.store.db, ctx.actor, threadId));
}

/** The transcript: user, assistant and system messages with text (tool traffic stays in the event log). */
export async function listThreadMessages(
  ctx: Ctx,
  { threadId }: { threadId: string },
): Promise<{ items: TranscriptMessage[] }> {
  await reachableThread(ctx.store.db, ctx.actor, threadId);
  const rows = await listMessages(ctx.store.db, threadId);
  return {
    items: rows.filter(inTranscript).map((r) => ({
      id: r.id,
      role: r.role,
      content: r.content,
      created_at: r.created_at,
      metadata: JSON.parse(r.metadata),
    })),
  };
}

/** Whether a stored message is shown in the transcript (tool traffic and empty steps are not). */
export function inTranscript(row: MessageRow): boolean {
  return row.role !== 'tool' && row.content !== '';
}
