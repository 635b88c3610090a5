import { describe, expect, it } from 'vitest';
import { endedTurnStatus, newThreadStatus, nextThreadStatus } from '../src/threads/thread-status.ts';

describe("a thread's status (D7)", () => {
  it('is running from the moment a turn is queued until the last one ends', () => {
    expect(newThreadStatus(true)).toBe('running');
    expect(newThreadStatus(false)).toBe('idle');
    expect(nextThreadStatus('success', { on: 'turn_active' })).toBe('running');
    const ended = { on: 'turn_ended', stopReason: 'end_turn', outcome: 'success' } as const;
    expect(nextThreadStatus('running', { ...ended, othersActive: true })).toBe('running');
    expect(nextThreadStatus('running', { ...ended, othersActive: false })).toBe('success');
  });

  it('after a turn ends: interrupted idle, errored fail, else its outcome or idle', () => {
    expect(endedTurnStatus('cancelled', 'success')).toBe('idle');
    expect(endedTurnStatus('error', 'success')).toBe('fail');
    expect(endedTurnStatus('end_turn', 'need_more_info')).toBe('need_more_info');
    expect(endedTurnStatus('max_turns')).toBe('idle');
  });

  it('after a Stop: running while its running turn ends, idle when it cancelled a queued one, else as it was', () => {
    expect(nextThreadStatus('running', { on: 'stop', turnRunning: true })).toBe('running');
    expect(nextThreadStatus('running', { on: 'stop', turnRunning: false })).toBe('idle');
    expect(nextThreadStatus('fail', { on: 'stop', turnRunning: false })).toBe('fail');
  });
});
