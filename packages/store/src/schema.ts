import type { Generated } from 'kysely';

/** Timestamps are stored as D3 strings (sortable text); JSON columns as text on both dialects. */
export interface UsersTable {
  id: string;
  username: string;
  password_hash: string | null;
  /** Set for users of an external OpenID Connect issuer: who they are there. */
  issuer: string | null;
  subject: string | null;
  created_at: string;
}

export interface SigningKeysTable {
  kid: string;
  public_jwk: string;
  private_jwk_sealed: string;
  created_at: string;
}

export interface OrgsTable {
  id: string;
  name: string;
  created_at: string;
}

export interface OrgMembersTable {
  org_id: string;
  user_id: string;
  role: string;
  created_at: string;
}

export interface TeamsTable {
  id: string;
  org_id: string;
  name: string;
  created_at: string;
}

export interface TeamMembersTable {
  team_id: string;
  user_id: string;
  role: string;
  created_at: string;
}

export interface TokensTable {
  id: string;
  kind: string;
  user_id: string;
  name: string;
  prefix: string;
  token_hash: string;
  scopes: string;
  agent_id: string | null;
  thread_id: string | null;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  /**
   * A thread token's sandbox host: `node:<id>` for this server's own (in-process) hosts, whose
   * sandboxes die with it, `runner:<id>` for a detached or self-hosted runner. Null otherwise.
   */
  holder: string | null;
}

/** A login session (D13) of the built-in issuer, or a revoked one of an external issuer. */
export interface LoginSessionsTable {
  /** The JWT's `jti`. */
  id: string;
  user_id: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
}

export interface AgentsTable {
  id: string;
  team_id: string;
  owner_user_id: string;
  spec_hash: string;
  title: string;
  harness: string;
  machine_kind: string;
  machine_size: string;
  model: string | null;
  instructions: string | null;
  entrypoint: string | null;
  mcp_servers: string;
  skills: string;
  secrets_enc: string | null;
  /** Control-plane profile (D13), outside the spec and its hash. */
  tagline: string | null;
  memory_enabled: Generated<number>;
  browser_enabled: Generated<number>;
  created_at: string;
  updated_at: string;
}

/** An agent visible to a team: its own team from creation, other teams once granted. */
export interface TeamAgentGrantsTable {
  team_id: string;
  agent_id: string;
  granted_at: string;
}

/** A chat or meeting install of an agent; its whole config (credentials included) sealed. */
export interface AgentIntegrationsTable {
  agent_id: string;
  /** `chat` or `meeting`. */
  kind: string;
  config_sealed: string;
  created_at: string;
  updated_at: string;
}

export interface ThreadsTable {
  id: string;
  agent_id: string;
  team_id: string;
  owner_user_id: string;
  title: string;
  status: string;
  metadata: string;
  group_id: string | null;
  generation: Generated<number>;
  last_seq: Generated<number>;
  last_position: Generated<number>;
  last_input_sequence: Generated<number>;
  /** Operator recovery (spec: Stop errors): `quarantined` or `retired`; null while the task is usable. */
  recovery_state: string | null;
  /** Where a task under recovery continues, when the operator named one. */
  replacement_task_id: string | null;
  /** When the thread's sandbox ends for good (a provider with a lifetime); set at its first boot. */
  machine_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

/** A thread's sandbox that a host runs, or boots, and vouches for until `live_until`. */
export interface LiveSandboxesTable {
  thread_id: string;
  live_until: string;
  /** The running sandbox: a new id each boot; null while a boot is under way. */
  sandbox_id: string | null;
  /** The machine it runs on: the server node's id (in-process sandboxes) or the runner's. */
  machine_id: string | null;
}

export interface MessagesTable {
  id: string;
  thread_id: string;
  position: number;
  role: string;
  content: string;
  parts: string | null;
  metadata: string;
  turn_id: string | null;
  created_at: string;
}

export interface InputsTable {
  id: string;
  thread_id: string;
  status: string;
  reason: string | null;
  turn_id: string | null;
  generation: number;
  sequence: number;
  messages: string;
  /** 1 when the input asks for a turn; 0 for messages kept without `run` until the next turn. */
  run: Generated<number>;
  /** A task input's `model_options` as given (JSON); null without. */
  model_options: string | null;
  created_at: string;
  updated_at: string;
}

export interface TurnsTable {
  id: string;
  thread_id: string;
  status: string;
  generation: number;
  lease_owner: string | null;
  lease_expires_at: string | null;
  cancel_requested: Generated<number>;
  /** `running`, or `finalizing` once the result is back and the settle has not committed yet. */
  phase: Generated<string>;
  /** 0 when the runtime reported, as the turn started, that it cannot interrupt it safely. */
  interruptible: Generated<number>;
  stop_reason: string | null;
  created_at: string;
  started_at: string | null;
  ended_at: string | null;
  /** The detached runner holding the turn; null for the server's in-process runner. */
  runner_id: string | null;
  /** Index of the last event from the runner that is stored (detached runners). */
  event_cursor: number | null;
}

export interface EventsTable {
  id: string;
  thread_id: string;
  seq: number;
  type: string;
  turn_id: string | null;
  tool_id: string | null;
  data: string;
  ts: string;
}

/** A resumable upload into a thread's workspace (D12). */
export interface FileTransfersTable {
  id: string;
  thread_id: string;
  /** Relative to the workspace, normalized. */
  path: string;
  /** bigint: PostgreSQL answers it as a string, so repositories convert. */
  size_bytes: number;
  /** `pending_upload`, `uploading`, `completed`, `cancelled`, `failed` or `expired`. */
  status: string;
  bytes_transferred: Generated<number>;
  /** The upload store's bucket (`local` for the file store) and the key of the bytes in it. */
  bucket: string;
  object_key: string;
  /** 1 while the upload store holds the transfer's bytes. */
  stored: Generated<number>;
  error_code: string | null;
  error: string | null;
  /** JSON of the file entry, once completed. */
  entry: string | null;
  /** Expiry of the newest signed upload URL. */
  expires_at: string;
  created_at: string;
  updated_at: string;
  /** When the transfer left `pending_upload`/`uploading`. */
  closed_at: string | null;
}

/** An agent's playbook or eval (its instructions, skills and MCP servers live on the agent row). */
export interface AgentComponentsTable {
  id: string;
  agent_id: string;
  kind: string;
  name: string;
  /** JSON: `[{path, content}]`, sorted by path. */
  files: string;
  /** SHA-256 of the component's canonical JSON (type, name, files). */
  hash: string;
  /** `active` or `archived`. */
  status: string;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
}

export interface EvalRunsTable {
  id: string;
  agent_id: string;
  eval_id: string;
  eval_name: string;
  eval_hash: string;
  task_id: string;
  /** `running` until the judge answers, then `passed` (it ran) or `failed` (it errored). */
  status: string;
  /** The verdict, 1 or 0, once the judge ran. */
  passed: number | null;
  reason: string | null;
  error: string | null;
  judge_model: string;
  created_at: string;
  finished_at: string | null;
}

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

/** The control plane's last probe of an agent's remote MCP server. */
export interface McpServerProbesTable {
  agent_id: string;
  server_name: string;
  /** The URL probed: a probe of another URL than the server's current one is stale. */
  target: string;
  /** `http` (streamable HTTP) or `sse`: the transport the probe connected with, or tried last. */
  transport: string;
  /** `ok` or `error`. */
  status: string;
  error: string | null;
  tool_count: number | null;
  /** 1 when the server answered 401 with OAuth metadata. */
  oauth_required: number;
  checked_at: string;
}

/** An agent's OAuth token for one of its MCP servers, sealed with the deployment's secret key. */
export interface McpOauthTokensTable {
  agent_id: string;
  server_name: string;
  access_token_sealed: string;
  refresh_token_sealed: string | null;
  expires_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface Database {
  users: UsersTable;
  signing_keys: SigningKeysTable;
  orgs: OrgsTable;
  org_members: OrgMembersTable;
  teams: TeamsTable;
  team_members: TeamMembersTable;
  tokens: TokensTable;
  login_sessions: LoginSessionsTable;
  agents: AgentsTable;
  team_agent_grants: TeamAgentGrantsTable;
  agent_integrations: AgentIntegrationsTable;
  threads: ThreadsTable;
  live_sandboxes: LiveSandboxesTable;
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
}
