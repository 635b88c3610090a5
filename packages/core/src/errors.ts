import type { ErrorCode } from '@paddock/protocol';

/**
 * The one error type core verbs throw. `code` is from the protocol's closed set; the HTTP layer
 * maps it to a status. `detail` overrides the body's `detail` when the wire wording is fixed.
 */
export class PaddockError extends Error {
  readonly code: ErrorCode | (string & {});
  readonly status?: number;
  readonly extra?: Record<string, unknown>;
  readonly retryAfter?: number;

  constructor(
    code: ErrorCode | (string & {}),
    message: string,
    options: { status?: number; extra?: Record<string, unknown>; retryAfter?: number } = {},
  ) {
    super(message);
    this.name = 'PaddockError';
    this.code = code;
    this.status = options.status;
    this.extra = options.extra;
    this.retryAfter = options.retryAfter;
  }
}

export const threadNotFound = () => new PaddockError('thread_not_found', 'Thread not found');
export const agentNotFound = () => new PaddockError('agent_not_found', 'Agent not found');
export const taskNotFound = () => new PaddockError('task_not_found', 'Task not found');
