import { createHash } from 'node:crypto';
import type { OrchestrationEdge, OrchestrationMember } from '@paddock/store';

/**
 * An orchestration's revision: SHA-256 (hex) over its name, members (agent id and role) and edges.
 * Members and edges are sorted first: the graph is a set, so declaring it in another order is not a
 * change. Ids and timestamps are not covered.
 */
export function orchestrationRevision(graph: {
  name: string;
  members: readonly OrchestrationMember[];
  edges: readonly OrchestrationEdge[];
}): string {
  const members = graph.members
    .map((m) => [m.agent_id, m.role ?? null] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const edges = graph.edges.map((e) => [e.from, e.to] as const).sort(compareEdges);
  return createHash('sha256')
    .update(JSON.stringify({ name: graph.name, members, edges }))
    .digest('hex');
}

function compareEdges(a: readonly [string, string], b: readonly [string, string]): number {
  const key = (e: readonly [string, string]) => `${e[0]} ${e[1]}`;
  return key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;
}
