import type { ErrorCode } from '@paddock/protocol';

/**
 * The one error type core verbs throw. `code` is from the protocol's closed set (a code outside it
 * does not compile), and the set gives its HTTP status.
 */
export class PaddockError extends Error {
  readonly code: ErrorCode;
  readonly extra?: Record<string, unknown>;
  readonly retryAfter?: number;

  constructor(
    code: ErrorCode,
    message: string,
    options: { extra?: Record<string, unknown>; retryAfter?: number } = {},
  ) {
    super(message);
    this.name = 'PaddockError';
    this.code = code;
    this.extra = options.extra;
    this.retryAfter = options.retryAfter;
  }
}

export const threadNotFound = () => new PaddockError('thread_not_found', 'Thread not found');
export const agentNotFound = () => new PaddockError('agent_not_found', 'Agent not found');
export const taskNotFound = () => new PaddockError('task_not_found', 'Task not found');
