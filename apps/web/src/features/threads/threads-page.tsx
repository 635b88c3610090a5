import type { ThreadPage } from '@paddock/sdk';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { ErrorNote } from '../../error-note.tsx';
import { client } from '../../session.ts';

type Status = ThreadPage['items'][number]['status'];
const statuses: Status[] = ['running', 'idle', 'success', 'fail', 'need_more_info'];

/** The caller's threads, newest first, refreshed every two seconds: new ones appear without a reload. */
export function ThreadsPage() {
  const [status, setStatus] = useState<Status | ''>('');
  const [params] = useSearchParams();
  const [agent, setAgent] = useState(params.get('agent') ?? '');
  const agentId = /^[0-9a-f-]{36}$/i.test(agent.trim()) ? agent.trim() : undefined;
  const threads = useQuery({
    queryKey: ['threads', status, agentId],
    queryFn: ({ signal }) =>
      client().threads.list({ status: status || undefined, agent_id: agentId, limit: 100 }, { signal }),
    refetchInterval: 2000,
  });

  return (
    <section aria-labelledby="threads-heading">
      <h1 id="threads-heading">Threads</h1>
      <div className="filters">
        <label>
          Status
          <select value={status} onChange={(e) => setStatus(e.target.value as Status | '')}>
            <option value="">any</option>
            {statuses.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Agent id
          <input value={agent} onChange={(e) => setAgent(e.target.value)} placeholder="any agent" />
        </label>
      </div>
      {threads.isPending && <p aria-busy="true">Loading threads…</p>}
      {threads.isError && <ErrorNote error={threads.error} />}
      {threads.data && threads.data.items.length === 0 && (
        <p className="empty">No threads yet. Start one with the API or `paddock run`.</p>
      )}
      {threads.data && threads.data.items.length > 0 && (
        <table className="threads thread-list">
          <thead>
            <tr>
              <th scope="col">Title</th>
              <th scope="col">Status</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {threads.data.items.map((t) => (
              <tr key={t.id} data-thread-id={t.id}>
                <td>
                  <Link to={`/threads/${t.id}`}>{t.title || t.id}</Link>
                </td>
                <td>
                  <span className={`status status-${t.status}`}>{t.status}</span>
                </td>
                <td>{new Date(`${t.created_at}Z`).toLocaleString()}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
