import type { UsageReport } from '@paddock/sdk';

type Day = UsageReport['days'][number];

/** Every UTC day from `from` to today, with the report's counts (zero where none). */
export function everyDay(from: string, days: Day[], today = new Date()): Day[] {
  const counted = new Map(days.map((d) => [d.date, d]));
  const all: Day[] = [];
  for (
    const at = new Date(`${from.slice(0, 10)}T00:00:00Z`);
    at <= today;
    at.setUTCDate(at.getUTCDate() + 1)
  ) {
    const date = at.toISOString().slice(0, 10);
    all.push(counted.get(date) ?? { date, input_tokens: 0, output_tokens: 0 });
  }
  return all;
}

/** Tokens by day as stacked bars (input below, output above); its label says the totals. */
export function UsageChart({ days }: { days: Day[] }) {
  const width = 640;
  const height = 200;
  const max = Math.max(1, ...days.map((d) => d.input_tokens + d.output_tokens));
  const bar = width / Math.max(days.length, 1);
  const scale = (n: number) => (n / max) * (height - 20);
  const total = days.reduce((n, d) => n + d.input_tokens + d.output_tokens, 0);
  return (
    <svg
      viewBox={`0 0 ${width} ${height}`}
      className="chart"
      role="img"
      aria-label={`${total} tokens over ${days.length} days; busiest day ${max} tokens`}
    >
      {days.map((d, i) => {
        const input = scale(d.input_tokens);
        const output = scale(d.output_tokens);
        return (
          <g key={d.date}>
            <title>{`${d.date}: ${d.input_tokens} in, ${d.output_tokens} out`}</title>
            <rect x={i * bar + 1} y={height - input} width={bar - 2} height={input} className="bar-input" />
            <rect
              x={i * bar + 1}
              y={height - input - output}
              width={bar - 2}
              height={output}
              className="bar-output"
            />
          </g>
        );
      })}
    </svg>
  );
}
