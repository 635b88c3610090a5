import { defaultRetryOptions, PaddockError, parseRetryAfter, retryDelayMs } from '@paddock/sdk';
import { describe, expect, it } from 'vitest';

const error = (code: PaddockError['code'], status: number, retryAfterMs?: number) =>
  new PaddockError({ code, status, message: code, retryAfterMs });
const options = { ...defaultRetryOptions, attempts: 3 };

describe('the retry policy', () => {
  it("waits the answer's Retry-After for the spec's retry-the-same-request answers", () => {
    expect(retryDelayMs(error('turn_interrupt_pending', 409, 1000), 1, true, options)).toBe(1000);
    expect(retryDelayMs(error('turn_interrupt_unconfirmed', 503, 1000), 1, true, options)).toBe(1000);
    expect(retryDelayMs(error('unavailable', 503, 2000), 1, false, options)).toBe(2000);
  });

  it('never retries the do-not-retry answers, with or without Retry-After', () => {
    for (const [code, status] of [
      ['task_recovery_required', 409],
      ['turn_interrupt_recovery_required', 503],
      ['turn_interrupt_unsupported', 422],
      ['task_terminal_no_machine', 409],
      ['credits_exhausted', 402],
      ['invalid_input_generation', 400],
    ] as const) {
      expect(error(code, status).retryable, code).toBe(false);
      expect(retryDelayMs(error(code, status, 1000), 1, true, options), code).toBeUndefined();
    }
  });

  it('retries a lost answer only for a replay-safe request, with bounded backoff and attempts', () => {
    const lost = error('network_error', 0);
    expect(retryDelayMs(lost, 1, false, options)).toBeUndefined();
    const first = retryDelayMs(lost, 1, true, options)!;
    expect(first).toBeGreaterThanOrEqual(options.baseDelayMs / 2);
    expect(first).toBeLessThanOrEqual(options.baseDelayMs);
    expect(retryDelayMs(lost, 3, true, options)).toBeUndefined();
    expect(retryDelayMs(error('machine_not_ready', 409, 120_000), 1, true, options)).toBeUndefined();
  });

  it('reads Retry-After as seconds or as a date', () => {
    expect(parseRetryAfter('2')).toBe(2000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
    expect(parseRetryAfter(null)).toBeUndefined();
  });
});
