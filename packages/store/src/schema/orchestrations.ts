/** A team's orchestration (D13); `revision` is the hash over name, members and edges. */
export interface OrchestrationsTable {
  id: string;
  team_id: string;
  name: string;
  revision: string;
  created_by: string;
  created_at: string;
  updated_at: string;
}

export interface OrchestrationMembersTable {
  orchestration_id: string;
  agent_id: string;
  role: string | null;
  /** Declared order. */
  position: number;
}

export interface OrchestrationEdgesTable {
  orchestration_id: string;
  from_agent_id: string;
  to_agent_id: string;
  position: number;
}
