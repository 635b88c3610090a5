import type { PaddockError } from './errors.ts';

/**
 * The spec's retry rules, in one place.
 *
 * - A request is *replay-safe* when sending it twice does what sending it once does: every read; a
 *   task input (the same `input_id` and messages answer the first receipt, `Idempotency-Replayed`);
 *   a Stop with a fixed `expected_generation` (a repeat answers the same task record); an agent
 *   PATCH. Thread create, message append and upload create are not: each send makes a new one.
 * - No answer (refused, reset, cut mid-answer): retried only when replay-safe, since the service
 *   may have acted on it.
 * - A retryable answer (`turn_interrupt_pending`, `turn_interrupt_unconfirmed`, `unavailable`,
 *   `machine_not_ready`, `task_run_busy`, `task_busy`, …, or any answer with `Retry-After`): the same
 *   request is sent again when it is replay-safe, or when the answer is `unavailable` (authorization
 *   refused it before anything ran).
 * - The "do not retry" answers (`task_recovery_required`, `turn_interrupt_recovery_required`,
 *   `turn_interrupt_unsupported`, `task_terminal_no_machine`, `credits_exhausted`, …) are never retried.
 * - The wait is the answer's `Retry-After` when it has one, else exponential backoff with jitter;
 *   a `Retry-After` beyond `maxRetryAfterMs` is not waited for (the error is thrown).
 * - At most `attempts` sends in all.
 */
export interface RetryOptions {
  /** Sends in all, the first included (1: never retry). */
  attempts: number;
  /** The first backoff; each further one doubles, up to `maxDelayMs`. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** The longest `Retry-After` waited for. */
  maxRetryAfterMs: number;
}

export const defaultRetryOptions: RetryOptions = {
  attempts: 6,
  baseDelayMs: 250,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 60_000,
};

/** The backoff before send number `attempt + 1` (attempt counts from 1), jittered to 50–100 %. */
export function backoffMs(attempt: number, options: RetryOptions, random = Math.random): number {
  const full = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(full * (0.5 + random() * 0.5));
}

/**
 * How long to wait before sending the request again after `error` ended send number `attempt`, or
 * `undefined` when it must not be sent again.
 */
export function retryDelayMs(
  error: PaddockError,
  attempt: number,
  replaySafe: boolean,
  options: RetryOptions,
): number | undefined {
  if (attempt >= options.attempts || !error.retryable) return undefined;
  if (!replaySafe && error.code !== 'unavailable') return undefined;
  if (error.retryAfterMs !== undefined) {
    return error.retryAfterMs <= options.maxRetryAfterMs ? error.retryAfterMs : undefined;
  }
  return backoffMs(attempt, options);
}

/** Waits `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
