import type { Generated } from 'kysely';

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
  /** The network policy as JSON (`"none"`, `"full"`, `{"allow": [...]}`); null is `registries`. */
  network: string | null;
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
  /** The OAuth client the token was issued to and its authorization server (sealed JSON), for refreshes. */
  client_sealed: string | null;
  created_at: string;
  updated_at: string;
}

/** An MCP OAuth authorization under way, by its `state`: the PKCE verifier and client, sealed. */
export interface McpOauthFlowsTable {
  state: string;
  agent_id: string;
  server_name: string;
  flow_sealed: string;
  created_at: string;
}
