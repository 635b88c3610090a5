import type { SteeredMessage } from '@paddock/protocol';
import type { SteeringInbox } from '../types.ts';

/**
 * The messages steered into a running turn, waiting for its next model call: the loop takes them
 * at each step's start (each offer then answers true: the message is the turn's), and at the turn's
 * end every offer not taken answers false, so the runner queues it for the next turn.
 */
export function steeredMessages(inbox: SteeringInbox | undefined) {
  const waiting: { message: SteeredMessage; resolve: (taken: boolean) => void }[] = [];
  let ended = false;
  inbox?.connect(
    (message) =>
      new Promise<boolean>((resolve) => {
        if (ended) resolve(false);
        else waiting.push({ message, resolve });
      }),
  );
  return {
    get waiting(): boolean {
      return waiting.length > 0;
    },
    take(): SteeredMessage[] {
      return waiting.splice(0).map(({ message, resolve }) => {
        resolve(true);
        return message;
      });
    },
    end(): void {
      ended = true;
      for (const { resolve } of waiting.splice(0)) resolve(false);
    },
  };
}
