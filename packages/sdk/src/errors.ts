import { type ErrorCode, errorStatus } from '@paddock/protocol/error-codes';

/**
 * What a `PaddockError` names: a code of the service's vocabulary (`@paddock/protocol`), or one of
 * the client's own: `network_error` (no answer came: refused, reset, cut) and `unknown` (an answer
 * the vocabulary does not name; `detail` keeps it as sent).
 */
export type PaddockErrorCode = ErrorCode | 'network_error' | 'unknown';

/** A 422's validation issue (D3). */
export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

/** The `detail` of an error body, as the service sent it (absent for a network error). */
export type ErrorDetail =
  | string
  | ({ code: string; message: string } & Record<string, unknown>)
  | ValidationIssue[];

/**
 * Answers the spec says never to retry automatically, whatever the request: an operator, a fresh
 * read or a different request is needed first.
 */
export const neverRetried: ReadonlySet<PaddockErrorCode> = new Set<PaddockErrorCode>([
  'task_recovery_required',
  'turn_interrupt_recovery_required',
  'turn_interrupt_unsupported',
  'task_terminal_no_machine',
  'credits_exhausted',
  'invalid_input_generation',
  'input_generation_stale',
  'idempotency_key_reused',
  'validation',
]);

/**
 * Answers that say the same request may succeed a moment later (the spec's "retry the same
 * request"); with a `Retry-After` the wait is the service's.
 */
export const retryableCodes: ReadonlySet<PaddockErrorCode> = new Set<PaddockErrorCode>([
  'network_error',
  'turn_interrupt_pending',
  'turn_interrupt_unconfirmed',
  'unavailable',
  'machine_not_ready',
  'task_run_busy',
  'task_busy',
  'sandbox_unavailable',
  'provider_unavailable',
]);

/** The one error the SDK throws for a refused or failed request. */
export class PaddockError extends Error {
  override readonly name = 'PaddockError';
  readonly code: PaddockErrorCode;
  /** The HTTP status; 0 when no answer came. */
  readonly status: number;
  /** True when the same request may succeed later (the SDK has already retried it within its budget). */
  readonly retryable: boolean;
  /** The body's `detail` as sent: a string, a `{code, message, …}` object, or validation issues. */
  readonly detail: ErrorDetail | undefined;
  /** The answer's `Retry-After`, in milliseconds. */
  readonly retryAfterMs: number | undefined;

  constructor(init: {
    code: PaddockErrorCode;
    status: number;
    message: string;
    detail?: ErrorDetail;
    retryAfterMs?: number;
    cause?: unknown;
  }) {
    super(init.message, { cause: init.cause });
    this.code = init.code;
    this.status = init.status;
    this.detail = init.detail;
    this.retryAfterMs = init.retryAfterMs;
    this.retryable =
      !neverRetried.has(init.code) && (retryableCodes.has(init.code) || init.retryAfterMs !== undefined);
  }

  /** `detail.replacement_task_id` of a `task_recovery_required`, when the service names one. */
  get replacementTaskId(): string | undefined {
    const detail = this.detail;
    if (detail && typeof detail === 'object' && !Array.isArray(detail)) {
      const id = detail.replacement_task_id;
      if (typeof id === 'string') return id;
    }
    return undefined;
  }
}

/** The string `detail`s the service answers (D3 wording), by code. */
const stringDetails: [RegExp, ErrorCode][] = [
  [/^missing bearer token$/, 'missing_token'],
  [/^invalid or expired PAT$/, 'invalid_token'],
  [/^invalid username or password$/, 'invalid_credentials'],
  [/^PAT lacks required scope/, 'scope_denied'],
  [/^Not Found$/, 'not_found'],
  [/^task is busy|^busy$/, 'task_busy'],
  [/^authorization temporarily unavailable/i, 'unavailable'],
];

/** For a string detail of status 404 such as `Thread not found`: the code `thread_not_found`. */
function notFoundCode(detail: string): ErrorCode | undefined {
  const match = /^(\w+) not found$/.exec(detail);
  if (!match) return undefined;
  const name = match[1]!.toLowerCase() === 'organization' ? 'org' : match[1]!.toLowerCase();
  const code = `${name}_not_found`;
  return code in errorStatus ? (code as ErrorCode) : undefined;
}

/** The code a status implies when the detail names none. */
const byStatus: Record<number, ErrorCode> = {
  401: 'invalid_token',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  413: 'payload_too_large',
  422: 'validation',
  500: 'internal',
  503: 'unavailable',
};

export function codeOf(status: number, detail: ErrorDetail | undefined): PaddockErrorCode {
  if (Array.isArray(detail)) return 'validation';
  if (detail && typeof detail === 'object') {
    return detail.code in errorStatus ? (detail.code as ErrorCode) : 'unknown';
  }
  if (typeof detail === 'string') {
    for (const [pattern, code] of stringDetails) if (pattern.test(detail)) return code;
    const notFound = status === 404 ? notFoundCode(detail) : undefined;
    if (notFound) return notFound;
  }
  return byStatus[status] ?? 'unknown';
}

/** `Retry-After` in milliseconds: delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function messageOf(status: number, detail: ErrorDetail | undefined): string {
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail)) return detail.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; ');
  if (detail) return detail.message;
  return `HTTP ${status}`;
}

/** The typed error of an answer that is not a success. Reads the body. */
export async function errorFromResponse(response: Response): Promise<PaddockError> {
  const text = await response.text().catch(() => '');
  let detail: ErrorDetail | undefined;
  try {
    const body = JSON.parse(text) as { detail?: ErrorDetail };
    detail = body.detail;
  } catch {
    detail = text || undefined;
  }
  return new PaddockError({
    code: codeOf(response.status, detail),
    status: response.status,
    message: messageOf(response.status, detail),
    detail,
    retryAfterMs: parseRetryAfter(response.headers.get('retry-after')),
  });
}

/** The typed error of a request that got no answer. */
export function networkError(cause: unknown): PaddockError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new PaddockError({ code: 'network_error', status: 0, message: `request failed: ${reason}`, cause });
}
