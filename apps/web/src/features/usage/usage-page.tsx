import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { ErrorNote } from '../../error-note.tsx';
import { client } from '../../session.ts';
import { everyDay, UsageChart } from './usage-chart.tsx';

/** Model tokens over time for one organization: a chart by day, and by agent and by thread. */
export function UsagePage() {
  const orgs = useQuery({
    queryKey: ['orgs-list'],
    queryFn: ({ signal }) => client().cli.orgs.list({ signal }),
  });
  const [chosen, setChosen] = useState<string | undefined>();
  const [days, setDays] = useState(30);
  const orgId = chosen ?? orgs.data?.items[0]?.id;
  const report = useQuery({
    queryKey: ['usage', orgId, days],
    enabled: orgId !== undefined,
    queryFn: ({ signal }) => client().cli.orgs.usage(orgId!, { days }, { signal }),
    refetchInterval: 10_000,
  });
  return (
    <section aria-labelledby="usage-heading">
      <h1 id="usage-heading">Usage</h1>
      <div className="filters">
        <label>
          Organization
          <select value={orgId ?? ''} onChange={(e) => setChosen(e.target.value)}>
            {orgs.data?.items.map((o) => (
              <option key={o.id} value={o.id}>
                {o.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Period
          <select value={days} onChange={(e) => setDays(Number(e.target.value))}>
            <option value={7}>7 days</option>
            <option value={30}>30 days</option>
            <option value={90}>90 days</option>
          </select>
        </label>
      </div>
      {(orgs.isError || report.isError) && <ErrorNote error={orgs.error ?? report.error} />}
      {report.data && (
        <>
          <UsageChart days={everyDay(report.data.from, report.data.days)} />
          <p className="legend">
            <span className="key key-input" /> input tokens <span className="key key-output" /> output tokens
          </p>
          <h2>By agent</h2>
          {report.data.agents.length === 0 && <p className="empty">No model calls in this period.</p>}
          <ul>
            {report.data.agents.map((a) => (
              <li key={a.agent_id}>
                <Link to={`/agents/${a.agent_id}`}>{a.agent_id.slice(0, 8)}</Link>: {a.input_tokens} in,{' '}
                {a.output_tokens} out
              </li>
            ))}
          </ul>
          <h2>Busiest threads</h2>
          <table className="threads">
            <thead>
              <tr>
                <th scope="col">Thread</th>
                <th scope="col">Input</th>
                <th scope="col">Output</th>
              </tr>
            </thead>
            <tbody>
              {report.data.threads.map((t) => (
                <tr key={t.thread_id} data-usage-thread={t.thread_id}>
                  <td>
                    <Link to={`/threads/${t.thread_id}`}>{t.title || t.thread_id}</Link>
                  </td>
                  <td>{t.input_tokens}</td>
                  <td>{t.output_tokens}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}
