/** An orchestration drawn as a graph: its members on a circle, its edges as arrows between them. */
export function OrchestrationGraph({
  members,
  edges,
  names,
}: {
  members: { agent_id: string; role: string | null }[];
  edges: { from: string; to: string }[];
  names: Map<string, string>;
}) {
  const size = 360;
  const radius = members.length > 1 ? 130 : 0;
  const at = new Map(
    members.map((m, i) => {
      const angle = (2 * Math.PI * i) / Math.max(members.length, 1) - Math.PI / 2;
      return [m.agent_id, { x: size / 2 + radius * Math.cos(angle), y: size / 2 + radius * Math.sin(angle) }];
    }),
  );
  const label = (id: string) => names.get(id) ?? id.slice(0, 8);
  const description = edges.map((e) => `${label(e.from)} to ${label(e.to)}`).join('; ');
  return (
    <svg
      viewBox={`0 0 ${size} ${size}`}
      className="graph"
      role="img"
      aria-label={`${members.length} members; edges: ${description || 'none'}`}
    >
      <defs>
        <marker
          id="arrow"
          viewBox="0 0 10 10"
          refX="10"
          refY="5"
          markerWidth="8"
          markerHeight="8"
          orient="auto"
        >
          <path d="M0,0 L10,5 L0,10 z" className="arrow-head" />
        </marker>
      </defs>
      {edges.map((e) => {
        const from = at.get(e.from);
        const to = at.get(e.to);
        if (!from || !to) return null;
        // Stop short of the node's circle, so the arrow head shows.
        const dx = to.x - from.x;
        const dy = to.y - from.y;
        const length = Math.hypot(dx, dy) || 1;
        const r = 34;
        return (
          <line
            key={`${e.from}-${e.to}`}
            x1={from.x + (dx / length) * r}
            y1={from.y + (dy / length) * r}
            x2={to.x - (dx / length) * r}
            y2={to.y - (dy / length) * r}
            className="edge"
            markerEnd="url(#arrow)"
          />
        );
      })}
      {members.map((m) => {
        const p = at.get(m.agent_id)!;
        return (
          <g key={m.agent_id}>
            <circle cx={p.x} cy={p.y} r={32} className="node" />
            <text x={p.x} y={p.y} textAnchor="middle" dominantBaseline="middle" className="node-label">
              {label(m.agent_id).slice(0, 12)}
            </text>
            {m.role && (
              <text x={p.x} y={p.y + 46} textAnchor="middle" className="node-role">
                {m.role.slice(0, 18)}
              </text>
            )}
          </g>
        );
      })}
    </svg>
  );
}
