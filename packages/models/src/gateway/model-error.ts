import { APICallError } from '@ai-sdk/provider';

/**
 * The status for a model call that failed, in every dialect. An upstream 4xx is the request's fault
 * and is passed on as is, so clients do not retry it. A failure the model marked as not retryable is
 * a 422: clients retry 5xx, and retrying it would only repeat it. Anything else is a 502.
 */
export function modelErrorStatus(error: unknown): number {
  const upstreamStatus = APICallError.isInstance(error) ? error.statusCode : undefined;
  const retryable = APICallError.isInstance(error) ? error.isRetryable : true;
  if (upstreamStatus !== undefined && upstreamStatus >= 400 && upstreamStatus < 500) return upstreamStatus;
  return retryable ? 502 : 422;
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  if (
    error !== null &&
    typeof error === 'object' &&
    'message' in error &&
    typeof error.message === 'string'
  ) {
    return error.message;
  }
  return 'model call failed';
}
