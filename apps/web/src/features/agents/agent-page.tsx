import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { ErrorNote } from '../../error-note.tsx';
import { client } from '../../session.ts';
import { ConnectionsPanel } from './connections-panel.tsx';
import { EvalsPanel } from './evals-panel.tsx';
import { KeysPanel } from './keys-panel.tsx';
import { ManifestPanel } from './manifest-panel.tsx';
import { McpPanel } from './mcp-panel.tsx';
import { SchedulesPanel } from './schedules-panel.tsx';
import { SecretsPanel } from './secrets-panel.tsx';

const policy = (network: unknown) =>
  typeof network === 'string'
    ? network
    : `allow ${((network as { allow: string[] }).allow ?? []).join(', ')}`;

/**
 * An agent: its spec as threads run it, its manifest's components, its secrets by name, keys, MCP
 * servers, connections, evals and schedules.
 */
export function AgentPage() {
  const { agentId = '' } = useParams();
  const agent = useQuery({
    queryKey: ['agent', agentId],
    queryFn: ({ signal }) => client().agents.get(agentId, { signal }),
  });
  if (agent.isPending) return <p aria-busy="true">Loading the agent…</p>;
  if (agent.isError) return <ErrorNote error={agent.error} />;
  const a = agent.data;
  return (
    <section aria-labelledby="agent-heading" className="agent">
      <h1 id="agent-heading">{a.title}</h1>
      <p>
        <Link to={`/?agent=${a.id}`}>Its threads</Link>
      </p>
      <dl className="spec">
        <dt>Harness</dt>
        <dd>{a.harness}</dd>
        <dt>Model</dt>
        <dd>{a.model ?? 'the deployment default'}</dd>
        <dt>Machine</dt>
        <dd>
          {a.machine_kind}, size {a.machine_size}
        </dd>
        <dt>Network</dt>
        <dd>{policy(a.network)}</dd>
        <dt>MCP servers</dt>
        <dd>{a.mcp_servers.length ? a.mcp_servers.map((s) => s.name).join(', ') : 'none'}</dd>
        <dt>Skills</dt>
        <dd>{a.skills.length ? a.skills.map((s) => s.source).join(', ') : 'none'}</dd>
      </dl>
      <h2>Instructions</h2>
      {a.instructions ? <pre className="instructions">{a.instructions}</pre> : <p className="empty">None.</p>}
      <ManifestPanel agentId={a.id} />
      <SecretsPanel agentId={a.id} names={a.secret_names} />
      <KeysPanel agentId={a.id} />
      <McpPanel agentId={a.id} />
      <ConnectionsPanel agentId={a.id} />
      <EvalsPanel agentId={a.id} />
      <SchedulesPanel agentId={a.id} />
    </section>
  );
}
