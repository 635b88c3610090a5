import { APICallError, RetryError } from 'ai';

export interface TurnError {
  code: string;
  message: string;
  retryable: boolean;
}

/** The `error` event payload for a failed model call; after retries, the last attempt's error tells. */
export function describeModelError(error: unknown): TurnError {
  const cause = RetryError.isInstance(error) ? error.lastError : error;
  const message =
    cause instanceof Error ? cause.message : typeof cause === 'string' ? cause : 'model call failed';
  return {
    code: 'model_error',
    message,
    retryable: APICallError.isInstance(cause) ? cause.isRetryable : false,
  };
}
