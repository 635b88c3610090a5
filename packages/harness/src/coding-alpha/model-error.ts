import { APICallError } from 'ai';

export interface TurnError {
  code: string;
  message: string;
  retryable: boolean;
}

/** The `error` event payload for a failed model call (after retries, the last attempt's error). */
export function describeModelError(cause: unknown): TurnError {
  return {
    code: 'model_error',
    message: messageOf(cause),
    retryable: APICallError.isInstance(cause) ? cause.isRetryable : false,
  };
}

/** An error's message; a provider's stream error frame is `{ message }` or `{ error: { message } }`. */
function messageOf(cause: unknown): string {
  if (cause instanceof Error) return cause.message;
  if (typeof cause === 'string') return cause;
  const frame = cause as { message?: unknown; error?: { message?: unknown } } | null | undefined;
  if (typeof frame?.message === 'string') return frame.message;
  if (typeof frame?.error?.message === 'string') return frame.error.message;
  return 'model call failed';
}
