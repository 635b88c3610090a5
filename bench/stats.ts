/** p50/p95 of samples in milliseconds, rounded to 0.1 ms. */
export function percentiles(samples: number[]): { p50: number; p95: number; n: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  const round = (v: number) => Math.round(v * 10) / 10;
  return { p50: round(at(0.5)), p95: round(at(0.95)), n: sorted.length };
}
