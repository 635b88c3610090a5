import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { ErrorNote } from '../../error-note.tsx';
import { client } from '../../session.ts';

/** An agent's evals, their runs with verdicts, and starting a run against one of its threads. */
export function EvalsPanel({ agentId }: { agentId: string }) {
  const queries = useQueryClient();
  const evals = useQuery({
    queryKey: ['evals', agentId],
    queryFn: ({ signal }) => client().cli.agents.evals(agentId, {}, { signal }),
  });
  const runs = useQuery({
    queryKey: ['eval-runs', agentId],
    queryFn: ({ signal }) => client().cli.agents.evalRuns(agentId, { limit: 50 }, { signal }),
    // A run is judged in the background: look again while one is under way.
    refetchInterval: (query) => (query.state.data?.items.some((r) => r.status === 'running') ? 2000 : false),
  });
  const [error, setError] = useState<unknown>(null);

  async function start(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const taskId = String(new FormData(event.currentTarget).get('task')).trim();
    setError(null);
    try {
      await client().cli.agents.startEvalRuns(agentId, { task_id: taskId });
      await queries.invalidateQueries({ queryKey: ['eval-runs', agentId] });
    } catch (caught) {
      setError(caught);
    }
  }

  const verdict = (r: { status: string; passed: boolean | null }) =>
    r.status === 'running' ? 'judging…' : r.status === 'failed' ? 'judge failed' : r.passed ? 'pass' : 'fail';

  return (
    <section aria-labelledby="evals-heading">
      <h2 id="evals-heading">Evals</h2>
      {evals.isError && <ErrorNote error={evals.error} />}
      {evals.data?.items.length === 0 && (
        <p className="empty">No evals: publish some in the agent's manifest.</p>
      )}
      <ul>
        {evals.data?.items.map((e) => (
          <li key={e.id}>
            <code>{e.name}</code> ({e.files.length} file{e.files.length === 1 ? '' : 's'})
          </li>
        ))}
      </ul>
      {evals.data && evals.data.items.length > 0 && (
        <form onSubmit={start} className="inline">
          <label>
            Thread to judge
            <input name="task" required pattern="[0-9a-fA-F-]{36}" autoComplete="off" />
          </label>
          <button type="submit">Run the evals</button>
        </form>
      )}
      {error !== null && <ErrorNote error={error} />}
      {runs.data && runs.data.items.length > 0 && (
        <table className="threads">
          <thead>
            <tr>
              <th scope="col">Eval</th>
              <th scope="col">Thread</th>
              <th scope="col">Verdict</th>
              <th scope="col">Reason</th>
            </tr>
          </thead>
          <tbody>
            {runs.data.items.map((r) => (
              <tr key={r.id}>
                <td>{r.eval_name}</td>
                <td>
                  <code>{r.task_id.slice(0, 8)}</code>
                </td>
                <td>
                  <span
                    className={`status status-${r.passed ? 'success' : r.status === 'running' ? 'running' : 'fail'}`}
                  >
                    {verdict(r)}
                  </span>
                </td>
                <td>{r.reason ?? r.error ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
