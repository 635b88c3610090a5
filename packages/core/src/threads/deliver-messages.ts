import type { DraftEvent } from '@paddock/protocol';
import { allocatePositions, type Db, insertMessages, newMessageRows } from '@paddock/store';
import type { QueuedMessage } from './queue-input.ts';

/** Puts client messages into the transcript, in order, and answers their `user.message` events. */
export async function deliverMessages(
  db: Db,
  threadId: string,
  messages: QueuedMessage[],
  turnId: string | null,
  at: string,
): Promise<DraftEvent[]> {
  if (messages.length === 0) return [];
  const first = await allocatePositions(db, threadId, messages.length);
  await insertMessages(
    db,
    newMessageRows(
      threadId,
      turnId,
      first,
      at,
      messages.map((m) => ({ ...m, parts: null, metadata: {} })),
    ),
  );
  return messages.map((m) => ({
    type: 'user.message',
    data: { message_id: m.id, content: m.content, role: m.role },
  }));
}
