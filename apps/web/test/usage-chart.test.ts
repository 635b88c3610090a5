import { describe, expect, it } from 'vitest';
import { everyDay } from '../src/features/usage/usage-chart.tsx';

describe('the usage chart', () => {
  it('has a bar for every day of the period, zero where nothing was counted', () => {
    const days = everyDay(
      '2026-11-26T00:00:00.000000',
      [{ date: '2026-11-27', input_tokens: 5, output_tokens: 7 }],
      new Date('2026-11-28T12:00:00Z'),
    );
    expect(days).toEqual([
      { date: '2026-11-26', input_tokens: 0, output_tokens: 0 },
      { date: '2026-11-27', input_tokens: 5, output_tokens: 7 },
      { date: '2026-11-28', input_tokens: 0, output_tokens: 0 },
    ]);
  });
});
