import { PaddockError } from '@paddock/sdk';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { ErrorNote } from '../src/error-note.tsx';
import { OrchestrationGraph } from '../src/features/orchestrations/orchestration-graph.tsx';
import { UsageChart } from '../src/features/usage/usage-chart.tsx';

const a = '00000000-0000-4000-8000-00000000000a';
const b = '00000000-0000-4000-8000-00000000000b';

describe('web app components', () => {
  it('draws an orchestration: a node a member, an arrow an edge, and says the edges in words', () => {
    const html = renderToStaticMarkup(
      <OrchestrationGraph
        members={[
          { agent_id: a, role: 'writer' },
          { agent_id: b, role: null },
        ]}
        edges={[{ from: a, to: b }]}
        names={new Map([[a, 'author']])}
      />,
    );
    expect(html.match(/<circle/g)).toHaveLength(2);
    expect(html.match(/<line/g)).toHaveLength(1);
    expect(html).toContain('aria-label="2 members; edges: author to 00000000"');
    expect(html).toContain('>writer<');
  });

  it('says whether trying again may help, for the spec’s retryable and other errors', () => {
    const busy = new PaddockError({
      code: 'task_run_busy',
      status: 409,
      message: 'busy',
      retryAfterMs: 5000,
    });
    const denied = new PaddockError({
      code: 'invalid_token',
      status: 401,
      message: 'invalid or expired PAT',
    });
    expect(busy.retryable).toBe(true);
    expect(renderToStaticMarkup(<ErrorNote error={busy} />)).toContain('busy Try again in a moment.');
    expect(renderToStaticMarkup(<ErrorNote error={denied} />)).toContain(
      'invalid or expired PAT Sign in again.',
    );
    expect(renderToStaticMarkup(<ErrorNote error={new TypeError('fetch failed')} />)).toContain(
      'The service could not be reached.',
    );
  });

  it('stacks a day’s input and output tokens, the busiest day the full height', () => {
    const html = renderToStaticMarkup(
      <UsageChart
        days={[
          { date: '2026-11-27', input_tokens: 30, output_tokens: 10 },
          { date: '2026-11-28', input_tokens: 10, output_tokens: 10 },
        ]}
      />,
    );
    expect(html).toContain('aria-label="60 tokens over 2 days; busiest day 40 tokens"');
    // 200 high, 20 kept free: 40 tokens are 180 units, so 30 are 135.
    expect(html).toContain('height="135"');
  });
});
