import { timestamp } from '@paddock/protocol';
import { findAgent, listMcpServerProbes, type McpServerProbeRow, upsertMcpServerProbe } from '@paddock/store';
import { openMcpServers } from '../agents/mcp-server-secrets.ts';
import { reachableThread } from '../auth/access.ts';
import type { Ctx, Services } from '../context.ts';
import { PaddockError, threadNotFound } from '../errors.ts';
import { isOutboundAddressError } from '../outbound/outbound-guard.ts';
import { mcpAccessToken } from './mcp-oauth.ts';

/** The request headers of the MCP streamable-HTTP exchange the relay passes on; no others. */
const forwardedHeaders = [
  'accept',
  'content-type',
  'mcp-session-id',
  'mcp-protocol-version',
  'last-event-id',
];

export interface McpRelayRequest {
  threadId: string;
  serverName: string;
  method: 'GET' | 'POST' | 'DELETE';
  headers: Record<string, string | string[] | undefined>;
  /** A POST's JSON-RPC message(s), as sent. */
  body?: string;
  /** Aborted when the sandbox goes away: the upstream request ends with it. */
  signal: AbortSignal;
}

/**
 * The MCP relay: a sandbox's only way to a `url` MCP server of its agent. The exchange (streamable
 * HTTP) is passed to the server's stored URL through the outbound guard, so a server at an address
 * the deployment does not allow is refused; the server's stored `headers` are added here, and the
 * agent's OAuth token for it (refreshed once lapsed) when it has one, so neither ever enters the sandbox. Of the
 * caller's headers only the protocol's pass (never its `Authorization`, the thread's own token).
 * Answers the server's response as it comes (SSE included). Each connection (`initialize`) and each
 * failed message is recorded as the server's last check, which the MCP server report shows.
 */
export async function relayMcpRequest(
  ctx: Ctx,
  services: Pick<Services, 'secrets' | 'outbound'>,
  input: McpRelayRequest,
): Promise<Response> {
  const thread = await reachableThread(ctx.store.db, ctx.actor, input.threadId);
  const agent = await findAgent(ctx.store.db, thread.agent_id);
  if (!agent) throw threadNotFound();
  const server = openMcpServers(services.secrets, agent.mcp_servers).find(
    (s) => s.name === input.serverName && s.url !== undefined && s.enabled !== false,
  );
  if (!server?.url) throw new PaddockError('mcp_server_not_found', `no MCP server named ${input.serverName}`);
  const url = server.url;

  const headers: Record<string, string> = {};
  for (const name of forwardedHeaders) {
    const value = input.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  Object.assign(headers, server.headers);
  const accessToken = await mcpAccessToken(
    { ...services, store: ctx.store },
    { agentId: agent.id, serverName: server.name, now: timestamp(new Date(ctx.clock.now())) },
  );
  if (accessToken) headers.authorization = `Bearer ${accessToken}`;

  const record = async (result: Pick<McpServerProbeRow, 'status' | 'error' | 'oauth_required'>) => {
    const previous = (await listMcpServerProbes(ctx.store.db, agent.id)).find(
      (p) => p.server_name === server.name && p.target === url,
    );
    await upsertMcpServerProbe(ctx.store.db, {
      agent_id: agent.id,
      server_name: server.name,
      target: url,
      transport: 'http',
      tool_count: previous?.tool_count ?? null,
      checked_at: timestamp(new Date(ctx.clock.now())),
      ...result,
    });
  };

  let response: Response;
  try {
    response = await services.outbound.fetch(url, {
      method: input.method,
      headers,
      body: input.method === 'POST' ? input.body : undefined,
      signal: input.signal,
    });
  } catch (error) {
    const reason = isOutboundAddressError(error) ? 'unreachable (address not allowed)' : 'unreachable';
    await record({ status: 'error', error: reason, oauth_required: 0 });
    throw new PaddockError('mcp_server_unreachable', `MCP server ${server.name}: ${reason}`);
  }
  // Only messages say how the server is: a GET may be refused (405: the server offers no stream of
  // its own) and a DELETE ends a session, without either being a failure to connect.
  if (input.method !== 'POST') return response;
  if (!response.ok)
    await record({
      status: 'error',
      error: response.status === 401 ? 'HTTP 401 unauthorized' : `HTTP ${response.status}`,
      oauth_required:
        response.status === 401 && /^\s*bearer\b/i.test(response.headers.get('www-authenticate') ?? '')
          ? 1
          : 0,
    });
  else if (isInitialize(input.body)) await record({ status: 'ok', error: null, oauth_required: 0 });
  return response;
}

/** Whether a JSON-RPC body is (or, batched, holds) an `initialize` request: a new connection. */
function isInitialize(body: string | undefined): boolean {
  if (!body) return false;
  try {
    const parsed = JSON.parse(body) as unknown;
    const messages = Array.isArray(parsed) ? parsed : [parsed];
    return messages.some((m) => (m as { method?: unknown } | null)?.method === 'initialize');
  } catch {
    return false;
  }
}
