import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { ErrorNote } from '../../error-note.tsx';
import { client } from '../../session.ts';

/** The caller's organizations (with their role) and each one's teams; an admin adds teams. */
export function OrgsPage() {
  const queries = useQueryClient();
  const orgs = useQuery({
    queryKey: ['orgs'],
    queryFn: async ({ signal }) => {
      const { cli } = client();
      const { items } = await cli.orgs.list({ signal });
      return Promise.all(
        items.map(async (org) => ({ org, teams: (await cli.teams.list(org.id, { signal })).items })),
      );
    },
  });
  const [error, setError] = useState<unknown>(null);

  async function addTeam(event: FormEvent<HTMLFormElement>, orgId: string) {
    event.preventDefault();
    const element = event.currentTarget;
    setError(null);
    try {
      await client().cli.teams.create(orgId, String(new FormData(element).get('team')).trim());
      element.reset();
      await queries.invalidateQueries({ queryKey: ['orgs'] });
    } catch (caught) {
      setError(caught);
    }
  }

  return (
    <section aria-labelledby="orgs-heading">
      <h1 id="orgs-heading">Organizations and teams</h1>
      {orgs.isPending && <p aria-busy="true">Loading…</p>}
      {orgs.isError && <ErrorNote error={orgs.error} />}
      {error !== null && <ErrorNote error={error} />}
      {orgs.data?.map(({ org, teams }) => (
        <article key={org.id} className="org" aria-labelledby={`org-${org.id}`}>
          <h2 id={`org-${org.id}`}>
            {org.name} <span className="muted">your role: {org.role}</span>
          </h2>
          <ul>
            {teams.map((team) => (
              <li key={team.id}>{team.name}</li>
            ))}
          </ul>
          {(org.role === 'owner' || org.role === 'admin') && (
            <form onSubmit={(e) => void addTeam(e, org.id)} className="inline">
              <label>
                New team in {org.name}
                <input name="team" required maxLength={100} autoComplete="off" />
              </label>
              <button type="submit">Add team</button>
            </form>
          )}
        </article>
      ))}
    </section>
  );
}
