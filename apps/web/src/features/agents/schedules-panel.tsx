import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { ErrorNote } from '../../error-note.tsx';
import { client } from '../../session.ts';

const when = (timestamp: string | null) =>
  timestamp ? `${timestamp.slice(0, 16).replace('T', ' ')} UTC` : '-';

/** An agent's schedules: each due time of a cron expression starts a thread; added and removed here. */
export function SchedulesPanel({ agentId }: { agentId: string }) {
  const queries = useQueryClient();
  const schedules = useQuery({
    queryKey: ['schedules', agentId],
    queryFn: ({ signal }) => client().cli.agents.schedules(agentId, { signal }),
  });
  const [error, setError] = useState<unknown>(null);

  async function act(work: () => Promise<unknown>) {
    setError(null);
    try {
      await work();
      await queries.invalidateQueries({ queryKey: ['schedules', agentId] });
    } catch (caught) {
      setError(caught);
    }
  }

  function add(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const element = event.currentTarget;
    const form = new FormData(element);
    void act(async () => {
      await client().cli.agents.addSchedule(agentId, {
        cron: String(form.get('cron')),
        time_zone: String(form.get('zone') || 'UTC'),
        input: String(form.get('input')),
      });
      element.reset();
    });
  }

  return (
    <section aria-labelledby="schedules-heading">
      <h2 id="schedules-heading">Schedules</h2>
      {schedules.isError && <ErrorNote error={schedules.error} />}
      {schedules.data?.items.length === 0 && <p className="empty">No schedules.</p>}
      <ul className="secrets">
        {schedules.data?.items.map((s) => (
          <li key={s.id}>
            <code>{s.name}</code> <code>{s.cron}</code> ({s.time_zone})
            {s.enabled ? `, next ${when(s.next_run_at)}` : ', disabled'}, sends “{s.input}”
            <button
              type="button"
              className="danger"
              onClick={() => void act(() => client().cli.agents.removeSchedule(agentId, s.id))}
            >
              Remove {s.name}
            </button>
          </li>
        ))}
      </ul>
      <form onSubmit={add} className="inline">
        <label>
          Cron
          <input name="cron" required placeholder="0 9 * * 1-5" autoComplete="off" />
        </label>
        <label>
          Time zone
          <input name="zone" placeholder="UTC" autoComplete="off" />
        </label>
        <label>
          Input
          <input name="input" required autoComplete="off" />
        </label>
        <button type="submit">Add schedule</button>
      </form>
      {error !== null && <ErrorNote error={error} />}
    </section>
  );
}
