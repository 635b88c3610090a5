import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { saveMcpOauthToken } from '@paddock/core';
import { testDatabases } from '@paddock/testing';
import { freePort } from '@paddock/testing/http';
import { startInjectedServer, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { strangerToken } from './control-plane-helpers.ts';
import { adminTokenWith, agentSpec, json } from './helpers.ts';

interface Report {
  name: string;
  transport: string;
  url: string | null;
  command: string | null;
  enabled: boolean;
  authorization: string;
  token: { present: boolean; expires_at: string | null };
  last_check: {
    status: string;
    error: string | null;
    tool_count: number | null;
    checked_at: string | null;
    source: string | null;
  };
}

/** A real MCP server (the SDK's own) with `tools` tools, on a fresh streamable HTTP transport per request. */
function mcpServer(tools: number): McpServer {
  const server = new McpServer({ name: 'test-mcp', version: '1.0.0' });
  for (let i = 0; i < tools; i++)
    server.registerTool(`tool_${i}`, { description: `tool ${i}` }, async () => ({
      content: [{ type: 'text', text: `${i}` }],
    }));
  return server;
}

async function serveStreamable(req: IncomingMessage, res: ServerResponse, tools: number): Promise<void> {
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  const server = mcpServer(tools);
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res);
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => unknown) {
  const server = createServer((req, res) => {
    Promise.resolve(handler(req, res)).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe.each(testDatabases())('MCP server report on $name', (database) => {
  let server: TestServer;
  const httpServers: Server[] = [];
  let openUrl: string;
  let authUrl: string;
  let sseUrl: string;
  let bareUrl: string;
  let unreachableUrl: string;
  let hangingUrl: string;
  const goodToken = 'mcp-oauth-token-6f1f0c2e9b';

  beforeAll(async () => {
    // The MCP servers here listen on loopback: a deployment with a local MCP server allows it so.
    server = await startInjectedServer(database, { PADDOCK_OUTBOUND_ALLOW: '127.0.0.1' });
    const open = await listen((req, res) => serveStreamable(req, res, 3));
    // Requires OAuth: 401 with the MCP authorization `WWW-Authenticate` and protected-resource
    // metadata, unless the caller brings the token the authorization server would have issued.
    const auth = await listen(async (req, res) => {
      if (req.url?.startsWith('/.well-known/oauth-protected-resource')) {
        res.setHeader('content-type', 'application/json');
        return res.end(JSON.stringify({ resource: `${auth.url}/mcp`, authorization_servers: [auth.url] }));
      }
      if (req.headers.authorization !== `Bearer ${goodToken}`) {
        res.writeHead(401, {
          'www-authenticate': `Bearer resource_metadata="${auth.url}/.well-known/oauth-protected-resource/mcp"`,
          'content-type': 'application/json',
        });
        return res.end('{"error":"invalid_token"}');
      }
      return serveStreamable(req, res, 5);
    });
    // Only the older HTTP+SSE transport: a POST to /sse is refused, GET opens the stream.
    const sseTransports = new Map<string, SSEServerTransport>();
    const sse = await listen(async (req, res) => {
      const url = new URL(req.url!, 'http://x');
      if (req.method === 'GET' && url.pathname === '/sse') {
        const transport = new SSEServerTransport('/messages', res);
        sseTransports.set(transport.sessionId, transport);
        res.on('close', () => sseTransports.delete(transport.sessionId));
        return mcpServer(2).connect(transport);
      }
      if (req.method === 'POST' && url.pathname === '/messages') {
        const transport = sseTransports.get(url.searchParams.get('sessionId') ?? '');
        if (transport) return transport.handlePostMessage(req, res);
      }
      res.writeHead(405).end();
    });
    // Accepts the connection and never answers.
    const hanging = await listen(() => new Promise<void>(() => {}));
    // A 401 without any OAuth metadata.
    const bare = await listen((_req, res) => {
      res.writeHead(401).end();
    });
    httpServers.push(open.server, auth.server, sse.server, bare.server, hanging.server);
    hangingUrl = `${hanging.url}/mcp`;
    openUrl = `${open.url}/mcp`;
    authUrl = `${auth.url}/mcp`;
    sseUrl = `${sse.url}/sse`;
    bareUrl = `${bare.url}/mcp`;
    unreachableUrl = `http://127.0.0.1:${await freePort()}/mcp`;
  });
  afterAll(async () => {
    for (const s of httpServers) {
      s.closeAllConnections();
      await new Promise((resolve) => s.close(resolve));
    }
    await server.close();
  });

  const createAgent = async (mcp_servers: unknown[], instructions = `mcp ${Math.random()}`) =>
    await json<{ agent_id: string; thread_id: string }>(
      await server.request('POST', '/v2/threads', {
        body: { agent: agentSpec({ instructions, mcp_servers }) },
      }),
      201,
    );
  const report = async (agentId: string, token?: string) =>
    (
      await json<{ items: Report[] }>(
        await server.request('GET', `/v2/cli/agents/${agentId}/mcp-servers`, { token }),
        200,
      )
    ).items;

  it('probes remote servers live with the MCP client: tools counted, 401 with OAuth metadata, unreachable', async () => {
    const { agent_id } = await createAgent([
      { name: 'open', url: openUrl },
      { name: 'needs-oauth', url: authUrl },
      { name: 'legacy', url: sseUrl },
      { name: 'bare-401', url: bareUrl },
      { name: 'gone', url: unreachableUrl },
      { name: 'off', url: openUrl, enabled: false },
      { name: 'local', command: 'npx', args: ['some-mcp-server'] },
    ]);
    const started = Date.now();
    const items = await report(agent_id);
    expect(Date.now() - started).toBeLessThan(5000);
    const byName = new Map(items.map((i) => [i.name, i]));
    expect(items.map((i) => i.name)).toEqual([
      'open',
      'needs-oauth',
      'legacy',
      'bare-401',
      'gone',
      'off',
      'local',
    ]);

    expect(byName.get('open')).toEqual({
      name: 'open',
      transport: 'http',
      url: openUrl,
      command: null,
      enabled: true,
      authorization: 'none',
      token: { present: false, expires_at: null },
      last_check: {
        status: 'ok',
        error: null,
        tool_count: 3,
        checked_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$/),
        source: 'control_plane',
      },
    });
    expect(byName.get('needs-oauth')).toMatchObject({
      transport: 'http',
      authorization: 'oauth_required',
      token: { present: false, expires_at: null },
      last_check: {
        status: 'error',
        error: 'HTTP 401 unauthorized',
        tool_count: null,
        source: 'control_plane',
      },
    });
    expect(byName.get('legacy')).toMatchObject({
      transport: 'sse',
      authorization: 'none',
      last_check: { status: 'ok', tool_count: 2, source: 'control_plane' },
    });
    expect(byName.get('bare-401')).toMatchObject({
      authorization: 'none',
      last_check: { status: 'error', error: 'HTTP 401 unauthorized' },
    });
    expect(byName.get('gone')).toMatchObject({
      transport: 'http',
      authorization: 'none',
      last_check: { status: 'error', error: 'unreachable (ECONNREFUSED)', tool_count: null },
    });
    // Switched off: reported, not probed.
    expect(byName.get('off')).toMatchObject({
      enabled: false,
      last_check: { status: 'unknown', checked_at: null, source: null },
    });
    // Runs inside the sandbox, which has said nothing about it yet.
    expect(byName.get('local')).toEqual({
      name: 'local',
      transport: 'stdio',
      url: null,
      command: 'npx',
      enabled: true,
      authorization: 'none',
      token: { present: false, expires_at: null },
      last_check: { status: 'unknown', error: null, tool_count: null, checked_at: null, source: null },
    });

    // Recorded: a second report within the freshness window answers the same probe.
    const again = await report(agent_id);
    expect(again.find((i) => i.name === 'open')!.last_check.checked_at).toBe(
      byName.get('open')!.last_check.checked_at,
    );
    const stored = await server.paddock.services.store.db
      .selectFrom('mcp_server_probes')
      .selectAll()
      .where('agent_id', '=', agent_id)
      .execute();
    expect(stored.map((p) => p.server_name).sort()).toEqual([
      'bare-401',
      'gone',
      'legacy',
      'needs-oauth',
      'open',
    ]);
  });

  it('reports a stored token as connected (and uses it), a lapsed one as expired, and never returns it', async () => {
    const { agent_id } = await createAgent([
      { name: 'connected', url: authUrl },
      { name: 'lapsed', url: authUrl },
    ]);
    const before = await report(agent_id);
    expect(before.map((i) => i.authorization)).toEqual(['oauth_required', 'oauth_required']);

    const expiresAt = '2999-01-01T00:00:00.000000';
    await saveMcpOauthToken(server.paddock.services, {
      agentId: agent_id,
      serverName: 'connected',
      accessToken: goodToken,
      refreshToken: 'refresh-secret-4d2a',
      expiresAt,
    });
    await saveMcpOauthToken(server.paddock.services, {
      agentId: agent_id,
      serverName: 'lapsed',
      accessToken: goodToken,
      expiresAt: '2000-01-01T00:00:00.000000',
    });
    // Sealed at rest.
    const rows = await server.paddock.services.store.db
      .selectFrom('mcp_oauth_tokens')
      .selectAll()
      .where('agent_id', '=', agent_id)
      .execute();
    expect(JSON.stringify(rows)).not.toContain(goodToken);
    expect(JSON.stringify(rows)).not.toContain('refresh-secret-4d2a');

    const response = await server.request('GET', `/v2/cli/agents/${agent_id}/mcp-servers`);
    const text = await response.text();
    expect(response.status).toBe(200);
    expect(text).not.toContain(goodToken);
    expect(text).not.toContain('refresh-secret-4d2a');
    const [connected, lapsed] = (JSON.parse(text) as { items: Report[] }).items;
    // A new token makes the stored probe stale: probed again, with the token, the server lets it in.
    expect(connected).toMatchObject({
      authorization: 'oauth_connected',
      token: { present: true, expires_at: expiresAt },
      last_check: { status: 'ok', tool_count: 5, error: null },
    });
    expect(lapsed).toMatchObject({
      authorization: 'oauth_expired',
      token: { present: true, expires_at: '2000-01-01T00:00:00.000000' },
      last_check: { status: 'error', error: 'HTTP 401 unauthorized' },
    });
  });

  it('reports a command server from the newest mcp.status its sandbox emitted', async () => {
    const { agent_id, thread_id } = await createAgent([
      { name: 'files', command: 'mcp-files' },
      { name: 'search', command: 'mcp-search' },
      { name: 'quiet', command: 'mcp-quiet' },
    ]);
    const { events } = server.paddock.services;
    // What a sandbox's harness emits on the thread's event log (the harness seam).
    await events.append(thread_id, null, [
      {
        type: 'mcp.status',
        data: { name: 'files', transport: 'stdio', status: 'failed', tool_count: 0, error: 'spawn ENOENT' },
      },
    ]);
    await events.append(thread_id, null, [
      {
        type: 'mcp.status',
        data: { name: 'files', transport: 'stdio', status: 'connected', tool_count: 4, error: null },
      },
      {
        type: 'mcp.status',
        data: {
          name: 'search',
          transport: 'stdio',
          status: 'failed',
          tool_count: 0,
          error: 'exited with code 1',
        },
      },
      // Connecting is no connection's result: the report keeps the one before it.
      {
        type: 'mcp.status',
        data: { name: 'files', transport: 'stdio', status: 'connecting', tool_count: 0, error: null },
      },
    ]);
    const items = await report(agent_id);
    expect(items[0]).toMatchObject({
      name: 'files',
      transport: 'stdio',
      command: 'mcp-files',
      last_check: {
        status: 'ok',
        error: null,
        tool_count: 4,
        source: 'sandbox',
        checked_at: expect.any(String),
      },
    });
    expect(items[1]).toMatchObject({
      name: 'search',
      last_check: { status: 'error', error: 'exited with code 1', tool_count: null, source: 'sandbox' },
    });
    expect(items[2]).toMatchObject({ name: 'quiet', last_check: { status: 'unknown', source: null } });
  });

  it('bounds each probe by its timeout, and probes an agent’s servers concurrently', async () => {
    const { agent_id } = await createAgent([
      { name: 'slow-1', url: hangingUrl },
      { name: 'slow-2', url: `${hangingUrl}?second` },
      { name: 'open', url: openUrl },
    ]);
    const started = Date.now();
    const items = await report(agent_id);
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(4900);
    expect(took).toBeLessThan(9000);
    expect(items.map((i) => [i.name, i.last_check.status, i.last_check.error])).toEqual([
      ['slow-1', 'error', 'timed out after 5000 ms'],
      ['slow-2', 'error', 'timed out after 5000 ms'],
      ['open', 'ok', null],
    ]);
  }, 20_000);

  it('needs a credential, and answers 404 Agent not found for an agent out of reach', async () => {
    const { agent_id } = await createAgent([]);
    expect(await report(agent_id)).toEqual([]);
    const missing = await server.request('GET', `/v2/cli/agents/${agent_id}/mcp-servers`, { token: null });
    expect((await json<{ detail: string }>(missing, 401)).detail).toBe('missing bearer token');
    // A read needs no scope.
    const readOnly = await adminTokenWith(server, ['read']);
    expect(await report(agent_id, readOnly)).toEqual([]);

    const stranger = (await strangerToken(server)).token;
    for (const id of [agent_id, '0190c3c8-7a86-7000-8000-000000000000']) {
      const refused = await server.request('GET', `/v2/cli/agents/${id}/mcp-servers`, { token: stranger });
      expect((await json<{ detail: string }>(refused, 404)).detail).toBe('Agent not found');
    }
    // Also under /api/cli.
    await json(await server.request('GET', `/api/cli/agents/${agent_id}/mcp-servers`), 200);
  });
});

describe.each(testDatabases())('MCP probe and the outbound guard on $name', (database) => {
  let guarded: TestServer;
  let allowing: TestServer;
  /** Real MCP servers on IPv4 and IPv6 loopback that count every connection made to them. */
  const local: { server: Server; port: number; connections: number }[] = [];
  beforeAll(async () => {
    [guarded, allowing] = await Promise.all([
      startInjectedServer(database),
      startInjectedServer(database, { PADDOCK_OUTBOUND_ALLOW: '127.0.0.0/8,::1' }),
    ]);
    for (const host of ['127.0.0.1', '::1']) {
      const server = createServer((req, res) => void serveStreamable(req, res, 1));
      const entry = { server, port: 0, connections: 0 };
      server.on('connection', () => entry.connections++);
      await new Promise<void>((resolve) => server.listen(0, host, resolve));
      entry.port = (server.address() as AddressInfo).port;
      local.push(entry);
    }
  });
  afterAll(async () => {
    for (const { server } of local) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    await Promise.all([guarded.close(), allowing.close()]);
  });

  const targets = () => {
    const [v4, v6] = [local[0]!.port, local[1]!.port];
    return [
      { name: 'loopback', url: `http://127.0.0.1:${v4}/mcp` },
      { name: 'localhost', url: `http://localhost:${v4}/mcp` },
      { name: 'mapped', url: `http://[::ffff:127.0.0.1]:${v4}/mcp` },
      { name: 'loopback-v6', url: `http://[::1]:${v6}/mcp` },
      { name: 'metadata', url: 'http://169.254.169.254/latest/meta-data/' },
      { name: 'private', url: 'http://10.0.0.1/mcp' },
    ];
  };
  async function reportOn(on: TestServer) {
    const readOnly = await adminTokenWith(on, ['read']);
    const { agent_id } = await json<{ agent_id: string }>(
      await on.request('POST', '/v2/threads', { body: { agent: agentSpec({ mcp_servers: targets() }) } }),
      201,
    );
    const response = await on.request('GET', `/v2/cli/agents/${agent_id}/mcp-servers`, { token: readOnly });
    return (await json<{ items: Report[] }>(response, 200)).items;
  }

  it('refuses loopback, private and metadata addresses without connecting, unless the deployment allows them', async () => {
    const before = local.map((l) => l.connections);
    const refused = await reportOn(guarded);
    expect(refused.map((i) => [i.name, i.last_check.status, i.last_check.error])).toEqual(
      targets().map((t) => [t.name, 'error', 'unreachable (address not allowed)']),
    );
    expect(local.map((l) => l.connections)).toEqual(before);

    const allowed = await reportOn(allowing);
    expect(allowed.map((i) => [i.name, i.last_check.status])).toEqual([
      ['loopback', 'ok'],
      ['localhost', 'ok'],
      ['mapped', 'ok'],
      ['loopback-v6', 'ok'],
      ['metadata', 'error'],
      ['private', 'error'],
    ]);
    expect(local.every((l, i) => l.connections > before[i]!)).toBe(true);
  }, 20_000);
});
