import type {
  agentCreateBodySchema,
  agentKeyCreatedSchema,
  agentKeySchema,
  agentPutBodySchema,
  Connection,
  ControlAgent,
  chatConnectBodySchema,
  EvalDefinition,
  EvalRun,
  evalRunsStartBodySchema,
  loginResponseSchema,
  Manifest,
  McpServerReport,
  manifestPutBodySchema,
  meetingConnectBodySchema,
  OrchestrationRecord,
  orchestrationCreateBodySchema,
  orchestrationManifestSchema,
  orchestrationUpdateBodySchema,
  orgSchema,
  personalTokenCreatedSchema,
  personalTokenSchema,
  Schedule,
  SignInProviders,
  scheduleCreateBodySchema,
  TeamAgent,
  teamSchema,
  UsageReport,
} from '@paddock/protocol';
import type { z } from 'zod';
import { type CallOptions, path, type Query, type Transport } from './http.ts';

/** Request bodies as a caller writes them (defaults may be left out). */
export type AgentCreateBody = z.input<typeof agentCreateBodySchema>;
export type AgentPutBody = z.input<typeof agentPutBodySchema>;
export type ChatConnectBody = z.input<typeof chatConnectBodySchema>;
export type MeetingConnectBody = z.input<typeof meetingConnectBodySchema>;
export type EvalRunsStartBody = z.input<typeof evalRunsStartBodySchema>;
export type ManifestPutBody = z.input<typeof manifestPutBodySchema>;
export type ScheduleCreateBody = z.input<typeof scheduleCreateBodySchema>;
export type OrchestrationCreateBody = z.input<typeof orchestrationCreateBodySchema>;
export type OrchestrationUpdateBody = z.input<typeof orchestrationUpdateBodySchema>;
export type Org = z.infer<typeof orgSchema>;
export type { UsageReport };
export type Team = z.infer<typeof teamSchema>;
export type OrchestrationManifest = z.infer<typeof orchestrationManifestSchema>;
export type PersonalToken = z.infer<typeof personalTokenSchema>;
export type PersonalTokenCreated = z.infer<typeof personalTokenCreatedSchema>;
export type AgentKey = z.infer<typeof agentKeySchema>;
export type AgentKeyCreated = z.infer<typeof agentKeyCreatedSchema>;
export type LoginResponse = z.infer<typeof loginResponseSchema>;
/** Scopes to mint with: `read`, `publish`, `admin` (a list, or one comma-separated string). */
export type MintScopes = string | string[];

type Items<T> = { items: T[] };

/**
 * The control plane (D13) under `/v2/cli`: organizations, teams, agents with their manifests,
 * secrets, keys, integrations, MCP report and evals, orchestrations and personal access tokens.
 * Writes that do the same when sent twice (PUT, PATCH, DELETE) are retried after a lost answer;
 * creations and publishes (whose `base_revision` would refuse a replay) are not.
 */
export function controlPlane(http: Transport) {
  const cli = (route: string) => `/v2/cli${route}`;
  const read = <T>(route: string, opts: CallOptions & { query?: Query } = {}) =>
    http.json<T>('GET', cli(route), { ...opts, replaySafe: true });
  const write = <T>(
    method: string,
    route: string,
    body: unknown,
    replaySafe: boolean,
    opts: CallOptions = {},
  ) => http.json<T>(method, cli(route), { ...opts, body, replaySafe });
  const remove = (route: string, opts: CallOptions = {}) =>
    http.send('DELETE', cli(route), { ...opts, replaySafe: true, read: async () => undefined });

  return {
    /** `POST /v2/auth/login`: the built-in login; answers a session token (`access_token`). */
    login: (username: string, password: string, opts: CallOptions = {}) =>
      http.json<LoginResponse>('POST', '/v2/auth/login', {
        ...opts,
        body: { username, password },
        replaySafe: false,
      }),
    /** `GET /v2/auth/providers`: the built-in login, and the OpenID Connect issuer when there is one. */
    signInProviders: (opts: CallOptions = {}) =>
      http.json<SignInProviders>('GET', '/v2/auth/providers', { ...opts, replaySafe: true }),
    /** `POST /v2/auth/logout`: ends the login session this client's token is (204 also when it was). */
    logout: (opts: CallOptions = {}) =>
      http.send('POST', '/v2/auth/logout', { ...opts, replaySafe: true, read: async () => undefined }),
    orgs: {
      list: (opts?: CallOptions) => read<Items<Org>>('/orgs', opts),
      /** The organization's model tokens over its last `days` UTC days (default 30). */
      usage: (orgId: string, query: { days?: number } = {}, opts?: CallOptions) =>
        read<UsageReport>(path`/orgs/${orgId}/usage`, { ...opts, query }),
    },
    teams: {
      list: (orgId: string, opts?: CallOptions) => read<Items<Team>>(path`/orgs/${orgId}/teams`, opts),
      create: (orgId: string, name: string, opts?: CallOptions) =>
        write<Team>('POST', path`/orgs/${orgId}/teams`, { name }, false, opts),
      /** The agents granted to the team, newest grant first. */
      agents: (orgId: string, teamId: string, query: { limit?: number } = {}, opts?: CallOptions) =>
        read<Items<TeamAgent>>(path`/orgs/${orgId}/teams/${teamId}/agents`, { ...opts, query }),
    },
    agents: {
      create: (body: AgentCreateBody, opts?: CallOptions) =>
        write<ControlAgent>('POST', '/agents', body, false, opts),
      get: (agentId: string, opts?: CallOptions) => read<ControlAgent>(path`/agents/${agentId}`, opts),
      /** Omitted fields are left alone; `null` clears an optional one. */
      update: (agentId: string, body: AgentPutBody, opts?: CallOptions) =>
        write<ControlAgent>('PUT', path`/agents/${agentId}`, body, true, opts),
      manifest: (agentId: string, opts?: CallOptions) =>
        read<Manifest>(path`/agents/${agentId}/manifest`, opts),
      /** Publishes a manifest; with `base_revision`, 409 when the agent moved since (pull first). */
      publish: (agentId: string, body: ManifestPutBody, opts?: CallOptions) =>
        write<Manifest>('PUT', path`/agents/${agentId}/manifest`, body, false, opts),
      revision: (agentId: string, opts?: CallOptions) =>
        read<{ revision: string }>(path`/agents/${agentId}/revision`, opts),
      /** The agent's secrets in plaintext (the control plane's owner may read them; spec rule 4). */
      secrets: (agentId: string, opts?: CallOptions) =>
        read<{ secrets: Record<string, string> }>(path`/agents/${agentId}/secrets`, opts),
      /** Replaces the whole map of secrets. */
      setSecrets: (agentId: string, secrets: Record<string, string>, opts?: CallOptions) =>
        write<{ secrets: Record<string, string> }>(
          'PUT',
          path`/agents/${agentId}/secrets`,
          { secrets },
          true,
          opts,
        ),
      connections: (agentId: string, opts?: CallOptions) =>
        read<Items<Connection>>(path`/agents/${agentId}/connections`, opts),
      connectChat: (agentId: string, body: ChatConnectBody, opts?: CallOptions) =>
        write<Connection>('PUT', path`/agents/${agentId}/connections/chat`, body, true, opts),
      connectMeeting: (agentId: string, body: MeetingConnectBody, opts?: CallOptions) =>
        write<Connection>('PUT', path`/agents/${agentId}/connections/meeting`, body, true, opts),
      disconnect: (agentId: string, kind: 'chat' | 'meeting', opts?: CallOptions) =>
        remove(`${path`/agents/${agentId}/connections`}/${kind}`, opts),
      /** Each MCP server of the agent, probed live. */
      mcpServers: (agentId: string, opts?: CallOptions) =>
        read<Items<McpServerReport>>(path`/agents/${agentId}/mcp-servers`, opts),
      evals: (agentId: string, query: { include_archived?: boolean } = {}, opts?: CallOptions) =>
        read<Items<EvalDefinition>>(path`/agents/${agentId}/evals`, { ...opts, query }),
      evalRuns: (agentId: string, query: { task_id?: string; limit?: number } = {}, opts?: CallOptions) =>
        read<Items<EvalRun>>(path`/agents/${agentId}/eval-runs`, { ...opts, query }),
      /** Judges a task against the agent's active evals (or the named ones); the runs settle later. */
      startEvalRuns: (agentId: string, body: EvalRunsStartBody, opts?: CallOptions) =>
        write<Items<EvalRun>>('POST', path`/agents/${agentId}/eval-runs`, body, false, opts),
      keys: (agentId: string, opts?: CallOptions) =>
        read<Items<AgentKey>>(path`/agents/${agentId}/keys`, opts),
      /** Mints an agent key; its plaintext is in this answer only. */
      createKey: (agentId: string, name?: string, opts?: CallOptions) =>
        write<AgentKeyCreated>(
          'POST',
          path`/agents/${agentId}/keys`,
          name === undefined ? {} : { name },
          false,
          opts,
        ),
      revokeKey: (keyId: string, opts?: CallOptions) => remove(path`/keys/${keyId}`, opts),
      schedules: (agentId: string, opts?: CallOptions) =>
        read<Items<Schedule>>(path`/agents/${agentId}/schedules`, opts),
      /** Adds a schedule: each due time of `cron` in `time_zone` starts a thread with `input`. */
      addSchedule: (agentId: string, body: ScheduleCreateBody, opts?: CallOptions) =>
        write<Schedule>('POST', path`/agents/${agentId}/schedules`, body, false, opts),
      removeSchedule: (agentId: string, scheduleId: string, opts?: CallOptions) =>
        remove(path`/agents/${agentId}/schedules/${scheduleId}`, opts),
    },
    orchestrations: {
      list: (orgId: string, teamId: string, opts?: CallOptions) =>
        read<Items<OrchestrationRecord>>(path`/orgs/${orgId}/teams/${teamId}/orchestrations`, opts),
      create: (body: OrchestrationCreateBody, opts?: CallOptions) =>
        write<OrchestrationRecord>('POST', '/orchestrations', body, false, opts),
      get: (orchId: string, opts?: CallOptions) =>
        read<OrchestrationRecord>(path`/orchestrations/${orchId}`, opts),
      manifest: (orchId: string, opts?: CallOptions) =>
        read<OrchestrationManifest>(path`/orchestrations/${orchId}/manifest`, opts),
      /** With `base_revision`, 409 when it moved since: not retried, a replay would be refused. */
      update: (orchId: string, body: OrchestrationUpdateBody, opts?: CallOptions) =>
        write<OrchestrationRecord>(
          'PUT',
          path`/orchestrations/${orchId}`,
          body,
          body.base_revision === undefined,
          opts,
        ),
    },
    tokens: {
      list: (opts?: CallOptions) => read<Items<PersonalToken>>('/tokens', opts),
      /** Mints a personal access token (default scope `read`); its plaintext is in this answer only. */
      create: (body: { name?: string; scopes?: MintScopes } = {}, opts?: CallOptions) =>
        write<PersonalTokenCreated>('POST', '/tokens', body, false, opts),
      rename: (tokenId: string, name: string, opts?: CallOptions) =>
        write<PersonalToken>('PATCH', path`/tokens/${tokenId}`, { name }, true, opts),
      revoke: (tokenId: string, opts?: CallOptions) => remove(path`/tokens/${tokenId}`, opts),
    },
  };
}

export type ControlPlane = ReturnType<typeof controlPlane>;
