import { randomUUID } from 'node:crypto';
import type { TurnCommand } from '@paddock/protocol';

/** A turn of Paddock's own harness with the test model: `text` after the conversation so far. */
export function turnCommand(text: string, earlier: TurnCommand['messages'] = []): TurnCommand {
  return {
    turn_id: randomUUID(),
    harness: 'coding_alpha',
    model: 'scripted',
    messages: [...earlier, { role: 'user', content: text }],
  };
}
