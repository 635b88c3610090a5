import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { ErrorNote } from '../../error-note.tsx';
import { client } from '../../session.ts';

/** Every agent granted to a team of the caller's organizations (the control plane's team listings). */
async function allAgents(signal: AbortSignal) {
  const { cli } = client();
  const { items: orgs } = await cli.orgs.list({ signal });
  const teams = (
    await Promise.all(
      orgs.map(async (org) =>
        (await cli.teams.list(org.id, { signal })).items.map((team) => ({ org, team })),
      ),
    )
  ).flat();
  const listed = await Promise.all(
    teams.map(async ({ org, team }) =>
      (await cli.teams.agents(org.id, team.id, { limit: 200 }, { signal })).items.map((agent) => ({
        agent,
        team: team.name,
      })),
    ),
  );
  return listed.flat();
}

export function AgentsPage() {
  const agents = useQuery({ queryKey: ['agents'], queryFn: ({ signal }) => allAgents(signal) });
  return (
    <section aria-labelledby="agents-heading">
      <h1 id="agents-heading">Agents</h1>
      {agents.isPending && <p aria-busy="true">Loading agents…</p>}
      {agents.isError && <ErrorNote error={agents.error} />}
      {agents.data?.length === 0 && (
        <p className="empty">No agents yet: a thread's first request makes one.</p>
      )}
      {agents.data && agents.data.length > 0 && (
        <table className="threads">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Harness</th>
              <th scope="col">Team</th>
            </tr>
          </thead>
          <tbody>
            {agents.data.map(({ agent, team }) => (
              <tr key={`${team}/${agent.id}`}>
                <td>
                  <Link to={`/agents/${agent.id}`}>{agent.name}</Link>
                </td>
                <td>{agent.harness}</td>
                <td>{team}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
