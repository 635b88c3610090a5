import { useQuery } from '@tanstack/react-query';
import { ErrorNote } from '../../error-note.tsx';
import { client } from '../../session.ts';

/** An agent's MCP servers, probed live: reachable or not, and how many tools each offers. */
export function McpPanel({ agentId }: { agentId: string }) {
  const servers = useQuery({
    queryKey: ['mcp', agentId],
    queryFn: ({ signal }) => client().cli.agents.mcpServers(agentId, { signal }),
  });
  return (
    <section aria-labelledby="mcp-heading">
      <h2 id="mcp-heading">MCP servers</h2>
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
    </section>
  );
}
