import type { Writable } from 'node:stream';
import type { SupervisorFrame } from '@paddock/protocol';

/**
 * Writes the supervisor's frames, one JSON object a line. When the runner reads slower than the
 * sandbox's programs write, `full` turns true until the link drains, and the relays pause their
 * programs' output meanwhile (the programs then block on their own full pipes).
 */
export class FrameWriter {
  readonly #output: Writable;
  readonly #onDrain = new Set<() => void>();
  full = false;

  constructor(output: Writable) {
    this.#output = output;
    output.on('drain', () => {
      this.full = false;
      for (const resume of this.#onDrain) resume();
    });
  }

  send(frame: SupervisorFrame): void {
    if (!this.#output.write(`${JSON.stringify(frame)}\n`)) this.full = true;
  }

  /** Called each time the link drains after being full. */
  whenDrained(resume: () => void): void {
    this.#onDrain.add(resume);
  }
}
