import type { AgentRow } from '@paddock/store';

/**
 * The manifest an orchestration's manifest variant inlines for one member: the agent's content
 * (instructions, skills, MCP servers). The one place `GET /orchestrations/{id}/manifest` takes a
 * member's manifest from, so the agents' own manifest reader can take its place whole.
 */
export function orchestrationMemberManifest(agent: AgentRow): Record<string, unknown> {
  return {
    instructions: agent.instructions,
    skills: JSON.parse(agent.skills) as unknown[],
    mcp_servers: JSON.parse(agent.mcp_servers) as unknown[],
  };
}
