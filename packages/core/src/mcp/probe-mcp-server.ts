import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { isOutboundAddressError, type OutboundGuard } from '../outbound/outbound-guard.ts';

export interface McpProbeResult {
  /** The transport that connected, or the last one tried. */
  transport: 'http' | 'sse';
  status: 'ok' | 'error';
  /** Why it failed, in a few words: a status code or a network reason, never the server's body. */
  error: string | null;
  toolCount: number | null;
  /** The server answered 401 and published OAuth metadata (its `WWW-Authenticate` or well-known). */
  oauthRequired: boolean;
}

/**
 * Probes a remote MCP server with the MCP SDK's client, as an agent's harness would reach it:
 * connect and initialize over streamable HTTP (falling back to the older HTTP+SSE transport when the
 * server refuses the first with a 4xx other than 401, as the MCP specification advises), then list
 * its tools. Everything is bounded by `timeoutMs`. `accessToken` is sent as a bearer token. Every
 * request goes through `fetch`, the outbound guard's: a server at an address the deployment does not
 * allow is never connected to, and is reported unreachable.
 */
export async function probeMcpServer(
  server: { url: string; headers?: Record<string, string> },
  options: { accessToken?: string; timeoutMs: number; fetch: OutboundGuard['fetch'] },
): Promise<McpProbeResult> {
  const url = new URL(server.url);
  const deadline = AbortSignal.timeout(options.timeoutMs);
  let unauthorized: { wwwAuthenticate: string | null } | undefined;
  const probeFetch = async (input: string | URL, init?: RequestInit): Promise<Response> => {
    const signal = init?.signal ? AbortSignal.any([init.signal, deadline]) : deadline;
    const response = await options.fetch(input, { ...init, signal });
    if (response.status === 401)
      unauthorized ??= { wwwAuthenticate: response.headers.get('www-authenticate') };
    return response;
  };
  const headers: Record<string, string> = { ...server.headers };
  if (options.accessToken) headers.Authorization = `Bearer ${options.accessToken}`;
  const requestInit = { headers };

  const attempt = async (transport: 'http' | 'sse'): Promise<McpProbeResult> => {
    const made: Transport =
      transport === 'http'
        ? new StreamableHTTPClientTransport(url, {
            requestInit,
            fetch: probeFetch,
            reconnectionOptions: {
              maxRetries: 0,
              initialReconnectionDelay: 1000,
              maxReconnectionDelay: 1000,
              reconnectionDelayGrowFactor: 1,
            },
          })
        : new SSEClientTransport(url, { requestInit, fetch: probeFetch });
    const toolCount = await connectAndListTools(made, deadline, options.timeoutMs);
    return { transport, status: 'ok', error: null, toolCount, oauthRequired: false };
  };

  const failed = async (transport: 'http' | 'sse', error: unknown): Promise<McpProbeResult> => {
    if (unauthorized)
      return {
        transport,
        status: 'error',
        error: 'HTTP 401 unauthorized',
        toolCount: null,
        oauthRequired: await publishesOauthMetadata(url, unauthorized.wwwAuthenticate, probeFetch).catch(
          () => false,
        ),
      };
    return {
      transport,
      status: 'error',
      error: describe(error, deadline, options.timeoutMs),
      toolCount: null,
      oauthRequired: false,
    };
  };

  try {
    return await attempt('http');
  } catch (error) {
    const refusedByStatus =
      error instanceof StreamableHTTPError &&
      error.code !== undefined &&
      error.code >= 400 &&
      error.code < 500;
    if (unauthorized || !refusedByStatus || deadline.aborted) return failed('http', error);
  }
  try {
    return await attempt('sse');
  } catch (error) {
    return failed('sse', error);
  }
}

async function connectAndListTools(
  transport: Transport,
  deadline: AbortSignal,
  timeoutMs: number,
): Promise<number> {
  const client = new Client({ name: 'paddock-control-plane', version: '0.1.0' });
  const options = { signal: deadline, timeout: timeoutMs };
  try {
    await client.connect(transport, options);
    if (!client.getServerCapabilities()?.tools) return 0;
    let count = 0;
    let cursor: string | undefined;
    // A server paging without end is cut off: the count is then a lower bound.
    for (let page = 0; page < 50; page++) {
      const listed = await client.listTools(cursor ? { cursor } : undefined, options);
      count += listed.tools.length;
      cursor = listed.nextCursor;
      if (!cursor) break;
    }
    return count;
  } finally {
    await client.close().catch(() => {});
  }
}

/**
 * Whether a 401 came with OAuth metadata: a `WWW-Authenticate: Bearer` naming its
 * `resource_metadata` (MCP authorization, 2025-06-18), or protected-resource or
 * authorization-server metadata at the server's well-known addresses (earlier revisions).
 */
async function publishesOauthMetadata(
  url: URL,
  wwwAuthenticate: string | null,
  probeFetch: (input: string | URL, init?: RequestInit) => Promise<Response>,
): Promise<boolean> {
  if (
    wwwAuthenticate &&
    /^\s*bearer\b/i.test(wwwAuthenticate) &&
    /resource_metadata\s*=/i.test(wwwAuthenticate)
  )
    return true;
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
  const candidates = [
    `/.well-known/oauth-protected-resource${path}`,
    '/.well-known/oauth-protected-resource',
    '/.well-known/oauth-authorization-server',
  ];
  for (const candidate of [...new Set(candidates)]) {
    const response = await probeFetch(new URL(candidate, url.origin), {
      headers: { accept: 'application/json' },
    });
    if (!response.ok) {
      await response.body?.cancel();
      continue;
    }
    const body = (await response.json().catch(() => null)) as Record<string, unknown> | null;
    if (
      body &&
      (Array.isArray(body.authorization_servers) || typeof body.authorization_endpoint === 'string')
    )
      return true;
  }
  return false;
}

/** A short reason, without anything the server sent back beyond a status or an MCP error code. */
function describe(error: unknown, deadline: AbortSignal, timeoutMs: number): string {
  if (isOutboundAddressError(error)) return 'unreachable (address not allowed)';
  if (deadline.aborted) return `timed out after ${timeoutMs} ms`;
  if (error instanceof StreamableHTTPError)
    return error.code === -1 ? 'unexpected content type' : `HTTP ${error.code}`;
  if (error instanceof McpError) return `MCP error ${error.code}`;
  const code = networkCode(error);
  if (code) return `unreachable (${code})`;
  if (error instanceof Error && /SSE error/.test(error.message)) {
    const status = /\b([45]\d\d)\b/.exec(error.message);
    return status ? `HTTP ${status[1]}` : 'SSE stream failed';
  }
  return 'connection failed';
}

function networkCode(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z_]+$/.test(code)) return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}
