import { useQuery } from '@tanstack/react-query';
import { ErrorNote } from '../../error-note.tsx';
import { client } from '../../session.ts';

/** An agent's MCP servers as the service last found them, and its chat and meeting connections. */
export function IntegrationsPanel({ agentId }: { agentId: string }) {
  const servers = useQuery({
    queryKey: ['mcp', agentId],
    queryFn: ({ signal }) => client().cli.agents.mcpServers(agentId, { signal }),
  });
  const connections = useQuery({
    queryKey: ['connections', agentId],
    queryFn: ({ signal }) => client().cli.agents.connections(agentId, { signal }),
  });
  return (
    <section aria-labelledby="integrations-heading">
      <h2 id="integrations-heading">MCP servers and connections</h2>
      {servers.isError && <ErrorNote error={servers.error} />}
      {servers.data?.items.length === 0 && <p className="empty">No MCP servers.</p>}
      <ul>
        {servers.data?.items.map((s) => (
          <li key={s.name}>
            <code>{s.name}</code> ({s.transport}
            {s.url ? `, ${s.url}` : ''}): {s.last_check.status}
            {s.last_check.tool_count !== null && `, ${s.last_check.tool_count} tools`}
            {s.last_check.error && `, ${s.last_check.error}`}
          </li>
        ))}
      </ul>
      {connections.isError && <ErrorNote error={connections.error} />}
      <ul>
        {connections.data?.items.map((c) => (
          <li key={c.kind}>
            {c.kind}: {c.connected ? 'connected' : 'not connected'}
          </li>
        ))}
      </ul>
    </section>
  );
}
