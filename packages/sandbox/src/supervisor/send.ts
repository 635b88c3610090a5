import type { SupervisorMessage } from '../protocol.ts';

/** stdout is a pipe, and pipe writes are synchronous on Linux, so nothing is lost when we exit right after. */
export function send(message: SupervisorMessage): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}
