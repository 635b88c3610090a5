import type { ConversationMessage } from '@paddock/protocol';
import { type Db, listMessagesAfter } from '@paddock/store';
import { toConversation } from './conversation.ts';

interface Kept {
  messages: ConversationMessage[];
  /** The position of the last message kept. */
  through: number;
  chars: number;
}

/**
 * The conversations of the threads whose turns this process ran lately, so that a follow-up reads
 * only the messages added since (its input, the last turn's answer), not its whole transcript: a
 * transcript only grows, so what is kept stays true. The least recently read go first once they
 * hold more than `maxChars` of text in all.
 */
export function conversationCache(maxChars = 32 * 1024 * 1024) {
  const kept = new Map<string, Kept>();
  let total = 0;

  function drop(threadId: string): void {
    const entry = kept.get(threadId);
    if (!entry) return;
    kept.delete(threadId);
    total -= entry.chars;
  }

  return {
    /** The threads whose conversations it keeps, the least recently read first. */
    held: (): string[] => [...kept.keys()],

    /** The thread's whole conversation, in order (a new array: the caller may keep it). */
    async read(db: Db, threadId: string): Promise<ConversationMessage[]> {
      const entry = kept.get(threadId);
      const rows = await listMessagesAfter(db, threadId, entry?.through ?? -1);
      drop(threadId);
      const messages = [...(entry?.messages ?? []), ...toConversation(rows)];
      const last = rows.at(-1);
      const chars =
        (entry?.chars ?? 0) +
        rows.reduce((sum, row) => sum + row.content.length + (row.parts?.length ?? 0), 0);
      kept.set(threadId, { messages, through: last ? last.position : (entry?.through ?? -1), chars });
      total += chars;
      for (const oldest of kept.keys()) {
        if (total <= maxChars || oldest === threadId) break;
        drop(oldest);
      }
      return [...messages];
    },
  };
}
