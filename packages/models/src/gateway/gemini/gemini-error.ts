import { errorMessage, modelErrorStatus } from '../model-error.ts';

/** The error body Gemini clients parse: `{ error: { code, message, status } }`. */
export interface GeminiErrorBody {
  error: { code: number; message: string; status: string };
}

// Google's canonical codes for the HTTP statuses the gateway answers.
const canonicalStatus: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  402: 'RESOURCE_EXHAUSTED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  413: 'INVALID_ARGUMENT',
  415: 'INVALID_ARGUMENT',
  422: 'FAILED_PRECONDITION',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  501: 'UNIMPLEMENTED',
  502: 'UNAVAILABLE',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

/** Gemini's error body for an HTTP status: `code` is the status, `status` its canonical name. */
export function geminiError(code: number, message: string): GeminiErrorBody {
  const status = canonicalStatus[code] ?? (code < 500 ? 'FAILED_PRECONDITION' : 'INTERNAL');
  return { error: { code, message, status } };
}

/** Status (see `modelErrorStatus`) and Gemini's body for a model call that failed. */
export function geminiModelError(error: unknown): { status: number; json: GeminiErrorBody } {
  const status = modelErrorStatus(error);
  return { status, json: geminiError(status, errorMessage(error)) };
}
