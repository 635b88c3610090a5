import type {
  AgentComponentsTable,
  AgentIntegrationsTable,
  AgentsTable,
  EvalRunsTable,
  McpOauthFlowsTable,
  McpOauthTokensTable,
  McpServerProbesTable,
  TeamAgentGrantsTable,
} from './schema/agents.ts';
import type { FileTransfersTable } from './schema/file-transfers.ts';
import type {
  LoginFailuresTable,
  LoginSessionsTable,
  OrgMembersTable,
  OrgsTable,
  SigningKeysTable,
  TeamMembersTable,
  TeamsTable,
  TokensTable,
  UsersTable,
} from './schema/identity.ts';
import type { ModelUsageTable } from './schema/model-usage.ts';
import type {
  OrchestrationEdgesTable,
  OrchestrationMembersTable,
  OrchestrationsTable,
} from './schema/orchestrations.ts';
import type { SchedulesTable } from './schema/schedules.ts';
import type { SkillVersionsTable } from './schema/skills.ts';
import type {
  EventsTable,
  InputsTable,
  LiveSandboxesTable,
  MachinesTable,
  MessagesTable,
  ThreadsTable,
  TurnsTable,
} from './schema/threads.ts';

export type * from './schema/agents.ts';
export type * from './schema/file-transfers.ts';
export type * from './schema/identity.ts';
export type * from './schema/model-usage.ts';
export type * from './schema/orchestrations.ts';
export type * from './schema/schedules.ts';
export type * from './schema/skills.ts';
export type * from './schema/threads.ts';

/**
 * Every table, one file an area under `schema/`. Timestamps are stored as D3 strings (sortable
 * text); JSON columns as text on both dialects.
 */
export interface Database {
  users: UsersTable;
  signing_keys: SigningKeysTable;
  orgs: OrgsTable;
  org_members: OrgMembersTable;
  teams: TeamsTable;
  team_members: TeamMembersTable;
  tokens: TokensTable;
  login_sessions: LoginSessionsTable;
  login_failures: LoginFailuresTable;
  agents: AgentsTable;
  team_agent_grants: TeamAgentGrantsTable;
  agent_integrations: AgentIntegrationsTable;
  threads: ThreadsTable;
  live_sandboxes: LiveSandboxesTable;
  machines: MachinesTable;
  messages: MessagesTable;
  inputs: InputsTable;
  turns: TurnsTable;
  events: EventsTable;
  file_transfers: FileTransfersTable;
  agent_components: AgentComponentsTable;
  eval_runs: EvalRunsTable;
  orchestrations: OrchestrationsTable;
  orchestration_members: OrchestrationMembersTable;
  orchestration_edges: OrchestrationEdgesTable;
  mcp_server_probes: McpServerProbesTable;
  mcp_oauth_tokens: McpOauthTokensTable;
  model_usage: ModelUsageTable;
  skill_versions: SkillVersionsTable;
  mcp_oauth_flows: McpOauthFlowsTable;
  schedules: SchedulesTable;
}
