import { errorMessage, modelErrorStatus } from '../model-error.ts';

/** The error body Anthropic's clients parse, and its `event: error` frame's data. */
export interface AnthropicErrorBody {
  type: 'error';
  error: { type: string; message: string };
}

export function anthropicError(type: string, message: string): AnthropicErrorBody {
  return { type: 'error', error: { type, message } };
}

/** Anthropic's error type for an HTTP status, as its API names them. */
export function anthropicErrorType(status: number): string {
  switch (status) {
    case 400:
    case 422:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 503:
    case 529:
      return 'overloaded_error';
    default:
      return status < 500 ? 'invalid_request_error' : 'api_error';
  }
}

/** Status (see `modelErrorStatus`) and Anthropic's body for a model call that failed. */
export function anthropicModelError(error: unknown): { status: number; json: AnthropicErrorBody } {
  const status = modelErrorStatus(error);
  return { status, json: anthropicError(anthropicErrorType(status), errorMessage(error)) };
}
