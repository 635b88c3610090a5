import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { ThreadEvent } from '@paddock/protocol';
import { testDatabases } from '@paddock/testing';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentSpec, allEvents, json, settled } from './helpers.ts';

/**
 * A local MCP server that requires OAuth, with its own authorization server (MCP authorization:
 * protected-resource and authorization-server metadata, dynamic client registration, PKCE S256,
 * refresh tokens). Access tokens last `accessTtlS`; `refuseRefresh` makes refreshes fail.
 */
async function startOauthServer() {
  const state = {
    accessTtlS: 3600,
    refuseRefresh: false,
    grants: [] as string[],
    clients: new Map<string, string[]>(),
    codes: new Map<string, { challenge: string; clientId: string; redirectUri: string }>(),
    access: new Map<string, number>(),
    refresh: new Set<string>(),
  };
  const body = (req: IncomingMessage) =>
    new Promise<string>((resolve) => {
      let text = '';
      req.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      req.on('end', () => resolve(text));
    });
  const sendJson = (res: ServerResponse, status: number, value: unknown) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
  const issue = (res: ServerResponse) => {
    const access = randomUUID();
    const refresh = randomUUID();
    state.access.set(access, Date.now() + state.accessTtlS * 1000);
    state.refresh.add(refresh);
    sendJson(res, 200, {
      access_token: access,
      token_type: 'Bearer',
      expires_in: state.accessTtlS,
      refresh_token: refresh,
    });
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url!, origin);
    if (url.pathname.startsWith('/.well-known/oauth-protected-resource'))
      return sendJson(res, 200, { resource: `${origin}/mcp`, authorization_servers: [origin] });
    if (url.pathname === '/.well-known/oauth-authorization-server')
      return sendJson(res, 200, {
        issuer: origin,
        authorization_endpoint: `${origin}/authorize`,
        token_endpoint: `${origin}/token`,
        registration_endpoint: `${origin}/register`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none'],
      });
    if (url.pathname === '/register' && req.method === 'POST') {
      const metadata = JSON.parse(await body(req)) as { redirect_uris: string[] };
      const clientId = randomUUID();
      state.clients.set(clientId, metadata.redirect_uris);
      return sendJson(res, 201, { ...metadata, client_id: clientId });
    }
    if (url.pathname === '/authorize') {
      // The user approves at once: back to the client's redirect URI with a code.
      const q = url.searchParams;
      const redirectUri = q.get('redirect_uri')!;
      if (
        !state.clients.get(q.get('client_id')!)?.includes(redirectUri) ||
        q.get('code_challenge_method') !== 'S256'
      )
        return sendJson(res, 400, { error: 'invalid_request' });
      const code = randomUUID();
      state.codes.set(code, {
        challenge: q.get('code_challenge')!,
        clientId: q.get('client_id')!,
        redirectUri,
      });
      const back = new URL(redirectUri);
      back.searchParams.set('code', code);
      back.searchParams.set('state', q.get('state')!);
      return res.writeHead(302, { location: back.toString() }).end();
    }
    if (url.pathname === '/token' && req.method === 'POST') {
      const form = new URLSearchParams(await body(req));
      const grant = form.get('grant_type')!;
      state.grants.push(grant);
      if (grant === 'authorization_code') {
        const code = state.codes.get(form.get('code') ?? '');
        state.codes.delete(form.get('code') ?? '');
        const verifier = form.get('code_verifier') ?? '';
        const challenge = createHash('sha256').update(verifier).digest('base64url');
        if (!code || code.challenge !== challenge || code.redirectUri !== form.get('redirect_uri'))
          return sendJson(res, 400, { error: 'invalid_grant' });
        return issue(res);
      }
      if (grant === 'refresh_token') {
        const refresh = form.get('refresh_token') ?? '';
        if (state.refuseRefresh || !state.refresh.delete(refresh))
          return sendJson(res, 400, { error: 'invalid_grant' });
        return issue(res);
      }
      return sendJson(res, 400, { error: 'unsupported_grant_type' });
    }
    if (url.pathname === '/mcp') {
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
      if ((state.access.get(token) ?? 0) < Date.now()) {
        res.writeHead(401, {
          'www-authenticate': `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`,
        });
        return res.end();
      }
      const mcp = new McpServer({ name: 'secured', version: '1.0.0' });
      mcp.registerTool('whoami', { description: 'Who the caller is' }, async () => ({
        content: [{ type: 'text', text: 'an authorized agent' }],
      }));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => {
        void transport.close();
        void mcp.close();
      });
      await mcp.connect(transport);
      return transport.handleRequest(req, res);
    }
    res.writeHead(404).end();
  };
  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { server, origin, state };
}

const statuses = (events: ThreadEvent[]) => events.filter((e) => e.type === 'mcp.status').map((e) => e.data);

describe.each(testDatabases())('MCP OAuth on $name', (database) => {
  let server: TestServer;
  let oauth: Awaited<ReturnType<typeof startOauthServer>>;

  beforeAll(async () => {
    server = await startTestServer(database, { PADDOCK_OUTBOUND_ALLOW: '127.0.0.1' });
    oauth = await startOauthServer();
  });
  afterAll(async () => {
    await server.close();
    await new Promise((resolve) => oauth.server.close(resolve));
  });

  const report = async (agentId: string) =>
    (
      await json<{ items: { authorization: string; token: { present: boolean } }[] }>(
        await server.request('GET', `/v2/cli/agents/${agentId}/mcp-servers`),
        200,
      )
    ).items[0]!;

  async function turn(threadId: string, input: string): Promise<ThreadEvent[]> {
    const before = (await allEvents(server, threadId)).length;
    await json(
      await server.request('POST', `/v2/tasks/${threadId}/inputs`, {
        body: { input_id: randomUUID(), messages: [{ content: input }] },
      }),
      201,
    );
    await settled(server, threadId, 60_000);
    return (await allEvents(server, threadId)).slice(before);
  }

  it('needs auth, then authorizes through the OAuth flow, calls the server, refreshes, and expires', async () => {
    const { thread_id: threadId, agent_id: agentId } = await json<{ thread_id: string; agent_id: string }>(
      await server.request('POST', '/v2/threads', {
        body: { agent: agentSpec({ mcp_servers: [{ name: 'secured', url: `${oauth.origin}/mcp` }] }) },
      }),
      201,
    );
    // Without a token: the sandbox reports needs_auth, the turn runs without the server's tools.
    let events = await turn(threadId, 'hello');
    expect(statuses(events).at(-1)).toMatchObject({
      name: 'secured',
      transport: 'http',
      status: 'needs_auth',
    });
    expect(await report(agentId)).toMatchObject({
      authorization: 'oauth_required',
      token: { present: false },
    });

    // The user starts the flow and opens the URL; the authorization server sends the browser back.
    const { authorization_url } = await json<{ authorization_url: string }>(
      await server.request('POST', `/v2/cli/agents/${agentId}/mcp-servers/secured/oauth`),
      200,
    );
    const authorize = new URL(authorization_url);
    expect(authorize.origin).toBe(oauth.origin);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    const approved = await fetch(authorization_url, { redirect: 'manual' });
    expect(approved.status).toBe(302);
    const callback = new URL(approved.headers.get('location')!);
    expect(callback.pathname).toBe('/v2/mcp/oauth/callback');
    const back = await fetch(callback);
    expect(back.status).toBe(200);
    expect(await back.text()).toContain('secured is connected');
    // A state is good once.
    expect((await fetch(callback)).status).toBe(400);
    expect(await report(agentId)).toMatchObject({
      authorization: 'oauth_connected',
      token: { present: true },
    });
    const stored = await server.paddock.services.store.db
      .selectFrom('mcp_oauth_tokens')
      .selectAll()
      .where('agent_id', '=', agentId)
      .executeTakeFirstOrThrow();
    for (const token of oauth.state.access.keys()) expect(JSON.stringify(stored)).not.toContain(token);

    // The next turn connects through the relay, which sends the token.
    events = await turn(threadId, '::call mcp__secured__whoami {}');
    expect(statuses(events).at(-1)).toMatchObject({ status: 'connected', tool_count: 1 });
    expect(events.find((e) => e.type === 'tool_call.end')!.data).toMatchObject({
      status: 'ok',
      output: 'an authorized agent',
    });
    expect(JSON.stringify(await allEvents(server, threadId))).not.toContain(
      [...oauth.state.access.keys()][0],
    );

    // A lapsed token is refreshed by the relay.
    oauth.state.accessTtlS = 1;
    await server.paddock.services.store.db
      .updateTable('mcp_oauth_tokens')
      .set({ expires_at: '2000-01-01T00:00:00.000000' })
      .where('agent_id', '=', agentId)
      .execute();
    events = await turn(threadId, '::call mcp__secured__whoami {}');
    expect(events.find((e) => e.type === 'tool_call.end')!.data).toMatchObject({ status: 'ok' });
    expect(oauth.state.grants).toEqual(['authorization_code', 'refresh_token']);
    expect(await report(agentId)).toMatchObject({ authorization: 'oauth_connected' });

    // A refresh that fails leaves the token lapsed: oauth_expired.
    oauth.state.refuseRefresh = true;
    await new Promise((resolve) => setTimeout(resolve, 1500));
    events = await turn(threadId, '::call mcp__secured__whoami {}');
    expect(events.find((e) => e.type === 'tool_call.end')!.data).toMatchObject({ status: 'error' });
    expect(await report(agentId)).toMatchObject({ authorization: 'oauth_expired' });
  });

  it('refuses an unknown state', async () => {
    const response = await fetch(`${server.url}/v2/mcp/oauth/callback?state=nope&code=x`);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ detail: { code: 'mcp_oauth_state_invalid' } });
  });
});
