import { useQuery } from '@tanstack/react-query';
import { ErrorNote } from '../../error-note.tsx';
import { client } from '../../session.ts';
import { OrchestrationGraph } from './orchestration-graph.tsx';

/** Every orchestration of the caller's teams, each drawn as its graph of members and edges. */
export function OrchestrationsPage() {
  const data = useQuery({
    queryKey: ['orchestrations'],
    queryFn: async ({ signal }) => {
      const { cli } = client();
      const { items: orgs } = await cli.orgs.list({ signal });
      const teams = (
        await Promise.all(orgs.map(async (o) => (await cli.teams.list(o.id, { signal })).items))
      ).flat();
      const perTeam = await Promise.all(
        teams.map(async (t) => ({
          orchestrations: (await cli.orchestrations.list(t.org_id, t.id, { signal })).items,
          agents: (await cli.teams.agents(t.org_id, t.id, { limit: 1000 }, { signal })).items,
        })),
      );
      return {
        orchestrations: perTeam.flatMap((t) => t.orchestrations),
        names: new Map(perTeam.flatMap((t) => t.agents.map((a) => [a.id, a.name] as const))),
      };
    },
  });
  return (
    <section aria-labelledby="orchestrations-heading">
      <h1 id="orchestrations-heading">Orchestrations</h1>
      {data.isPending && <p aria-busy="true">Loading…</p>}
      {data.isError && <ErrorNote error={data.error} />}
      {data.data?.orchestrations.length === 0 && (
        <p className="empty">No orchestrations: create one with `paddock orchestration create`.</p>
      )}
      {data.data?.orchestrations.map((o) => (
        <article key={o.id} aria-labelledby={`orch-${o.id}`} className="orchestration">
          <h2 id={`orch-${o.id}`}>{o.name}</h2>
          <OrchestrationGraph members={o.members} edges={o.edges} names={data.data.names} />
        </article>
      ))}
    </section>
  );
}
