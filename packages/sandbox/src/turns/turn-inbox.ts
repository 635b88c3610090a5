import type { SteeringInbox } from '@paddock/harness';
import type { SteeredMessage } from '@paddock/protocol';

/**
 * A turn's steering inbox: messages offered before the harness connects wait for it; once the turn
 * is over every offer answers false, so the runner queues the message for the next turn instead.
 */
export class TurnInbox implements SteeringInbox {
  #take: ((message: SteeredMessage) => Promise<boolean>) | undefined;
  readonly #waiting: { message: SteeredMessage; resolve: (taken: boolean) => void }[] = [];
  #closed = false;
  /** Ids of the messages the harness took, in the order it took them: they travel with the result. */
  readonly taken: string[] = [];

  connect(take: (message: SteeredMessage) => Promise<boolean>): void {
    this.#take = take;
    for (const { message, resolve } of this.#waiting.splice(0)) void this.#offerNow(message).then(resolve);
  }

  offer(message: SteeredMessage): Promise<boolean> {
    if (this.#closed) return Promise.resolve(false);
    if (this.#take) return this.#offerNow(message);
    return new Promise((resolve) => this.#waiting.push({ message, resolve }));
  }

  async #offerNow(message: SteeredMessage): Promise<boolean> {
    const taken = await this.#take!(message);
    if (taken) this.taken.push(message.id);
    return taken;
  }

  close(): void {
    this.#closed = true;
    for (const { resolve } of this.#waiting.splice(0)) resolve(false);
  }
}
