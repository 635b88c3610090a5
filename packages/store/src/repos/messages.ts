import { newId } from '@paddock/protocol';
import type { Selectable } from 'kysely';
import type { MessagesTable } from '../schema.ts';
import type { Db } from '../store.ts';

export type MessageRow = Selectable<MessagesTable>;

export async function insertMessages(db: Db, rows: MessageRow[]): Promise<void> {
  if (rows.length > 0) await db.insertInto('messages').values(rows).execute();
}

/** The whole conversation of a thread, in order. */
export function listMessages(db: Db, threadId: string): Promise<MessageRow[]> {
  return listMessagesAfter(db, threadId, -1);
}

/**
 * The thread's messages after `position`, in order: what a conversation read up to there lacks. A
 * transcript only grows, one thread's positions allocated under its lock, so none is missed.
 */
export function listMessagesAfter(db: Db, threadId: string, position: number): Promise<MessageRow[]> {
  return db
    .selectFrom('messages')
    .selectAll()
    .where('thread_id', '=', threadId)
    .where('position', '>', position)
    .orderBy('position')
    .execute();
}

/** Rows for consecutive positions starting at `first`; a message without an id gets a new one. */
export function newMessageRows(
  threadId: string,
  turnId: string | null,
  first: number,
  at: string,
  messages: {
    id?: string;
    role: string;
    content: string;
    parts: string | null;
    metadata: Record<string, unknown>;
  }[],
): MessageRow[] {
  return messages.map((m, i) => ({
    id: m.id ?? newId(),
    thread_id: threadId,
    position: first + i,
    role: m.role,
    content: m.content,
    parts: m.parts,
    metadata: JSON.stringify(m.metadata),
    turn_id: turnId,
    created_at: at,
  }));
}

/** Which of these message ids the thread's transcript holds. */
export async function existingMessageIds(db: Db, threadId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .selectFrom('messages')
    .select('id')
    .where('thread_id', '=', threadId)
    .where('id', 'in', ids)
    .execute();
  return new Set(rows.map((r) => r.id));
}
