import { errorMessage, modelErrorStatus } from './model-error.ts';

/** The error body OpenAI-compatible clients parse: `{ error: { message, type, code } }`. */
export interface OpenAIErrorBody {
  error: { message: string; type: string; code: string; param?: string | null };
}

export function openAIError(message: string, type: string, code: string): OpenAIErrorBody {
  return { error: { message, type, code } };
}

/** Status (see `modelErrorStatus`) and OpenAI's body for a model call that failed. */
export function modelErrorResponse(error: unknown): { status: number; json: OpenAIErrorBody } {
  return {
    status: modelErrorStatus(error),
    json: openAIError(errorMessage(error), 'api_error', 'model_error'),
  };
}
