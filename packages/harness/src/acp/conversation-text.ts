import type { ModelMessage } from 'ai';

/** The text of the user messages that start this turn: those after the last assistant or tool message. */
export function newestUserText(messages: ModelMessage[]): string {
  const start = messages.findLastIndex((m) => m.role !== 'user') + 1;
  return messages.slice(start).map(textOf).filter(Boolean).join('\n\n');
}

/**
 * The conversation before this turn, for a program that starts without its session: each message on
 * lines of its own, quoted, so that nothing in it reads as an instruction of the new turn.
 */
export function conversationText(messages: ModelMessage[]): string | undefined {
  const earlier = messages.slice(0, messages.findLastIndex((m) => m.role !== 'user') + 1);
  const lines = earlier
    .filter((m) => m.role === 'user' || m.role === 'assistant')
    .map((m) => ({ role: m.role, text: textOf(m) }))
    .filter((m) => m.text)
    .map((m) => `${m.role === 'user' ? 'User' : 'You'}:\n${m.text.replace(/^/gm, '> ')}`);
  if (lines.length === 0) return undefined;
  return ['# The conversation so far', 'This thread continues an earlier conversation:', '', ...lines].join(
    '\n',
  );
}

function textOf(message: ModelMessage): string {
  if (typeof message.content === 'string') return message.content;
  return message.content
    .map((part) => (part.type === 'text' ? part.text : ''))
    .filter(Boolean)
    .join('\n');
}
