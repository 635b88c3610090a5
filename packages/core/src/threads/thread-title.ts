/** D5: a thread names itself from its first user message: first line, whitespace collapsed, ≤ 80 chars. */
export function deriveThreadTitle(firstUserMessage: string | undefined): string {
  const line = firstUserMessage
    ?.split('\n')
    .map((l) => l.replace(/\s+/g, ' ').trim())
    .find(Boolean);
  return line ? line.slice(0, 80) : 'New thread';
}
