import type { ConversationMessage } from '@paddock/protocol';
import type { MessageRow } from '@paddock/store';

/** Transcript rows back into the conversation a harness continues. */
export function toConversation(rows: MessageRow[]): ConversationMessage[] {
  return rows.map((row) => ({
    role: row.role as ConversationMessage['role'],
    content: row.parts ? JSON.parse(row.parts) : row.content,
  }));
}

/** The readable text of a harness message: its text parts joined. */
export function messageText(message: ConversationMessage): string {
  if (typeof message.content === 'string') return message.content;
  if (!Array.isArray(message.content)) return '';
  return message.content
    .filter((p): p is { type: 'text'; text: string } => p?.type === 'text' && typeof p.text === 'string')
    .map((p) => p.text)
    .join('');
}
