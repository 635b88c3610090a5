import { APICallError } from '@ai-sdk/provider';

/** The error body OpenAI-compatible clients parse: `{ error: { message, type, code } }`. */
export interface OpenAIErrorBody {
  error: { message: string; type: string; code: string; param?: string | null };
}

export function openAIError(message: string, type: string, code: string): OpenAIErrorBody {
  return { error: { message, type, code } };
}

/**
 * Status and body for a model call that failed. An upstream 4xx is the request's fault and is
 * passed on as is, so clients do not retry it. A failure the model marked as not retryable is a
 * 422: clients retry 5xx, and retrying it would only repeat it. Anything else is a 502.
 */
export function modelErrorResponse(error: unknown): { status: number; json: OpenAIErrorBody } {
  const upstreamStatus = APICallError.isInstance(error) ? error.statusCode : undefined;
  const retryable = APICallError.isInstance(error) ? error.isRetryable : true;
  const status =
    upstreamStatus !== undefined && upstreamStatus >= 400 && upstreamStatus < 500
      ? upstreamStatus
      : retryable
        ? 502
        : 422;
  return { status, json: openAIError(errorMessage(error), 'api_error', 'model_error') };
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
