import type { AgentSpec, McpAuthorizationState, McpServerReport } from '@paddock/protocol';
import { timestamp } from '@paddock/protocol';
import {
  listAgentMcpStatusEvents,
  listMcpOauthTokens,
  listMcpServerProbes,
  type McpOauthTokenRow,
  type McpServerProbeRow,
  upsertMcpOauthToken,
  upsertMcpServerProbe,
} from '@paddock/store';
import { openMcpServers } from '../agents/mcp-server-secrets.ts';
import { reachableAgent } from '../auth/access.ts';
import type { Ctx, Services } from '../context.ts';
import { probeMcpServer } from './probe-mcp-server.ts';

type McpServer = NonNullable<AgentSpec['mcp_servers']>[number];

/** How long one probe may take; servers are probed concurrently, so this bounds the whole GET. */
export const mcpProbeTimeoutMs = 5000;
/** A probe younger than this is answered again instead of probing anew (repeated GETs). */
export const mcpProbeFreshMs = 10_000;
/** How many of an agent's newest `mcp.status` events are read for its command servers. */
const statusEventsRead = 200;

/**
 * `GET /agents/{id}/mcp-servers`: per MCP server of the agent, its transport, enabled state,
 * authorization state and last connectivity result. Remote servers (`url`) are probed live from
 * the control plane, concurrently and bounded by `mcpProbeTimeoutMs`, unless a probe of the same URL
 * is younger than `mcpProbeFreshMs` and no token was stored since; every probe is recorded. Command
 * servers run inside the sandbox, out of the control plane's reach: their result is the newest
 * `mcp.status` event an agent's sandbox emitted for that name, else `unknown`. Tokens never leave
 * here: only whether one exists and when it lapses.
 */
export async function getMcpServerReport(
  ctx: Ctx,
  services: Pick<Services, 'secrets' | 'outbound'>,
  input: { agentId: string },
): Promise<{ items: McpServerReport[] }> {
  const agent = await reachableAgent(ctx.store.db, ctx.actor, input.agentId);
  const servers = openMcpServers(services.secrets, agent.mcp_servers);
  const [probes, tokens, statuses] = await Promise.all([
    listMcpServerProbes(ctx.store.db, agent.id),
    listMcpOauthTokens(ctx.store.db, agent.id),
    servers.some((s) => s.command !== undefined)
      ? listAgentMcpStatusEvents(ctx.store.db, agent.id, statusEventsRead)
      : Promise.resolve([]),
  ]);
  const probeOf = new Map(probes.map((p) => [p.server_name, p]));
  const tokenOf = new Map(tokens.map((t) => [t.server_name, t]));
  const sandboxStatus = newestStatusByName(statuses);
  const nowMs = ctx.clock.now();
  const now = timestamp(new Date(nowMs));

  const items = await Promise.all(
    servers.map(async (server): Promise<McpServerReport> => {
      const enabled = server.enabled !== false;
      const token = tokenOf.get(server.name);
      const tokenLive = token !== undefined && (token.expires_at === null || token.expires_at > now);
      let probe = probeOf.get(server.name);
      if (probe && probe.target !== server.url) probe = undefined;
      if (server.url !== undefined && enabled && !isFresh(probe, token, nowMs)) {
        probe = await probeOnce(
          ctx,
          services,
          agent.id,
          server as McpServer & { url: string },
          tokenLive ? token : undefined,
        );
      }
      const authorization: McpAuthorizationState = token
        ? tokenLive
          ? 'oauth_connected'
          : 'oauth_expired'
        : probe?.oauth_required
          ? 'oauth_required'
          : 'none';
      const base = {
        name: server.name,
        url: server.url ?? null,
        command: server.command ?? null,
        enabled,
        authorization,
        token: { present: token !== undefined, expires_at: token?.expires_at ?? null },
      };
      if (server.url === undefined) {
        const status = sandboxStatus.get(server.name);
        return {
          ...base,
          transport: 'stdio',
          last_check: status
            ? { ...status, source: 'sandbox' }
            : { status: 'unknown', error: null, tool_count: null, checked_at: null, source: null },
        };
      }
      return {
        ...base,
        transport: probe
          ? (probe.transport as 'http' | 'sse')
          : new URL(server.url).pathname.endsWith('/sse')
            ? 'sse'
            : 'http',
        last_check: probe
          ? {
              status: probe.status as 'ok' | 'error',
              error: probe.error,
              tool_count: probe.tool_count,
              checked_at: probe.checked_at,
              source: 'control_plane',
            }
          : { status: 'unknown', error: null, tool_count: null, checked_at: null, source: null },
      };
    }),
  );
  return { items };
}

/**
 * Stores an agent's OAuth token for one of its MCP servers, sealed. The OAuth flow (`mcp-oauth.ts`)
 * writes through it; the report then answers `oauth_connected` until `expiresAt`.
 */
export async function saveMcpOauthToken(
  services: Pick<Services, 'store' | 'secrets'>,
  token: {
    agentId: string;
    serverName: string;
    accessToken: string;
    refreshToken?: string;
    expiresAt?: string;
    /** The OAuth client and authorization server (JSON) a refresh needs; sealed here. */
    client?: string;
  },
): Promise<void> {
  const now = timestamp();
  await upsertMcpOauthToken(services.store.db, {
    agent_id: token.agentId,
    server_name: token.serverName,
    access_token_sealed: services.secrets.seal(token.accessToken),
    refresh_token_sealed: token.refreshToken ? services.secrets.seal(token.refreshToken) : null,
    expires_at: token.expiresAt ?? null,
    client_sealed: token.client ? services.secrets.seal(token.client) : null,
    created_at: now,
    updated_at: now,
  });
}

function isFresh(
  probe: McpServerProbeRow | undefined,
  token: McpOauthTokenRow | undefined,
  nowMs: number,
): boolean {
  if (!probe) return false;
  if (token && token.updated_at >= probe.checked_at) return false;
  return Date.parse(`${probe.checked_at}Z`) > nowMs - mcpProbeFreshMs;
}

/** Probes under way in this process, so concurrent reports of one agent share them. */
const inFlight = new Map<string, Promise<McpServerProbeRow>>();

function probeOnce(
  ctx: Ctx,
  services: Pick<Services, 'secrets' | 'outbound'>,
  agentId: string,
  server: McpServer & { url: string },
  token: McpOauthTokenRow | undefined,
): Promise<McpServerProbeRow> {
  const key = `${agentId}\n${server.name}\n${server.url}\n${token?.updated_at ?? ''}`;
  const running = inFlight.get(key);
  if (running) return running;
  const probe = (async () => {
    const result = await probeMcpServer(
      { url: server.url, headers: server.headers },
      {
        timeoutMs: mcpProbeTimeoutMs,
        fetch: services.outbound.fetch,
        accessToken: token ? services.secrets.open(token.access_token_sealed) : undefined,
      },
    );
    const row: McpServerProbeRow = {
      agent_id: agentId,
      server_name: server.name,
      target: server.url,
      transport: result.transport,
      status: result.status,
      error: result.error,
      tool_count: result.toolCount,
      oauth_required: result.oauthRequired ? 1 : 0,
      checked_at: timestamp(new Date(ctx.clock.now())),
    };
    await upsertMcpServerProbe(ctx.store.db, row);
    return row;
  })().finally(() => inFlight.delete(key));
  inFlight.set(key, probe);
  return probe;
}

type SandboxCheck = Omit<McpServerReport['last_check'], 'source'>;

/**
 * The newest `mcp.status` per server name, `connecting` ones aside. A status of `connected`, `ready`
 * or `ok` is ok; any other is an error, explained by the event's `error` or its status.
 */
function newestStatusByName(events: readonly { data: string; ts: string }[]): Map<string, SandboxCheck> {
  const newest = new Map<string, SandboxCheck>();
  for (const event of events) {
    const data = JSON.parse(event.data) as {
      name?: unknown;
      status?: unknown;
      error?: unknown;
      tool_count?: unknown;
    };
    if (typeof data.name !== 'string' || newest.has(data.name)) continue;
    const status = typeof data.status === 'string' ? data.status : 'unknown';
    // A server still connecting has no result yet: the one before stands.
    if (status === 'connecting') continue;
    const ok = ['connected', 'ready', 'ok'].includes(status);
    newest.set(data.name, {
      status: ok ? 'ok' : 'error',
      error: ok ? null : typeof data.error === 'string' ? data.error : status,
      tool_count: ok && typeof data.tool_count === 'number' ? data.tool_count : null,
      checked_at: event.ts,
    });
  }
  return newest;
}
