import { randomBytes } from 'node:crypto';
import {
  discoverOAuthServerInfo,
  exchangeAuthorization,
  refreshAuthorization,
  registerClient,
  startAuthorization,
} from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  AuthorizationServerMetadata,
  OAuthClientInformationMixed,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { timestamp } from '@paddock/protocol';
import {
  insertMcpOauthFlow,
  listMcpOauthTokens,
  type McpOauthTokenRow,
  purgeMcpOauthFlows,
  takeMcpOauthFlow,
} from '@paddock/store';
import { openMcpServers } from '../agents/mcp-server-secrets.ts';
import { reachableAgent } from '../auth/access.ts';
import type { Ctx, Services } from '../context.ts';
import { PaddockError } from '../errors.ts';
import { saveMcpOauthToken } from './mcp-server-report.ts';

/** How long an authorization URL stays good: its flow is dropped after. */
export const mcpOauthFlowTtlMs = 10 * 60_000;

/** The OAuth client Paddock registered with a server's authorization server, kept with its token. */
export interface McpOauthClient {
  authorizationServerUrl: string;
  metadata?: AuthorizationServerMetadata;
  clientInformation: OAuthClientInformationMixed;
  resource?: string;
  redirectUri: string;
}

interface McpOauthFlow extends McpOauthClient {
  codeVerifier: string;
}

type OauthServices = Pick<Services, 'store' | 'secrets' | 'outbound'>;

/**
 * Starts the MCP authorization flow for one of an agent's `url` servers: discovers its authorization
 * server (protected-resource metadata, then the server's metadata), registers Paddock as a client
 * (dynamic client registration, a public client with PKCE), and answers the authorization URL the
 * user opens. The flow (PKCE verifier, client) is stored sealed under its `state` until the callback,
 * at most `mcpOauthFlowTtlMs`. Every request goes through the outbound guard.
 */
export async function startMcpOauth(
  ctx: Ctx,
  services: Pick<Services, 'secrets' | 'outbound'>,
  input: { agentId: string; serverName: string; redirectUri: string },
): Promise<{ authorization_url: string }> {
  const agent = await reachableAgent(ctx.store.db, ctx.actor, input.agentId);
  const server = openMcpServers(services.secrets, agent.mcp_servers).find(
    (s) => s.name === input.serverName && s.url !== undefined,
  );
  if (!server?.url) throw new PaddockError('mcp_server_not_found', `no MCP server named ${input.serverName}`);
  const fetchFn = services.outbound.fetch;
  const flow = await oauthStep('discovery', async () => {
    const info = await discoverOAuthServerInfo(server.url!, { fetchFn });
    const metadata = info.authorizationServerMetadata;
    const scope = info.resourceMetadata?.scopes_supported?.join(' ');
    const clientInformation = await registerClient(info.authorizationServerUrl, {
      metadata,
      clientMetadata: {
        client_name: 'Paddock',
        redirect_uris: [input.redirectUri],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      },
      scope,
      fetchFn,
    });
    return { info, metadata, scope, clientInformation };
  });
  const state = randomBytes(24).toString('base64url');
  const resource = flow.info.resourceMetadata?.resource;
  const { authorizationUrl, codeVerifier } = await oauthStep('authorization', () =>
    startAuthorization(flow.info.authorizationServerUrl, {
      metadata: flow.metadata,
      clientInformation: flow.clientInformation,
      redirectUrl: input.redirectUri,
      scope: flow.scope,
      state,
      resource,
    }),
  );
  const stored: McpOauthFlow = {
    authorizationServerUrl: flow.info.authorizationServerUrl,
    metadata: flow.metadata,
    clientInformation: flow.clientInformation,
    resource,
    redirectUri: input.redirectUri,
    codeVerifier,
  };
  const now = ctx.clock.now();
  await purgeMcpOauthFlows(ctx.store.db, timestamp(new Date(now - mcpOauthFlowTtlMs)));
  await insertMcpOauthFlow(ctx.store.db, {
    state,
    agent_id: agent.id,
    server_name: server.name,
    flow_sealed: services.secrets.seal(JSON.stringify(stored)),
    created_at: timestamp(new Date(now)),
  });
  return { authorization_url: authorizationUrl.toString() };
}

/**
 * The authorization server sent the user back (`/v2/mcp/oauth/callback`): the flow named by `state`
 * is taken (once), the code exchanged for tokens with its PKCE verifier, and the token stored sealed
 * with the client it was issued to (what a refresh needs). The state is the credential: unguessable,
 * single use, and good for `mcpOauthFlowTtlMs`.
 */
export async function finishMcpOauth(
  services: OauthServices,
  input: { state: string; code?: string; error?: string },
): Promise<{ agentId: string; serverName: string }> {
  const row = await takeMcpOauthFlow(services.store.db, input.state);
  const begun = row ? Date.parse(`${row.created_at}Z`) : 0;
  if (!row || begun < Date.now() - mcpOauthFlowTtlMs)
    throw new PaddockError('mcp_oauth_state_invalid', 'unknown or expired authorization state');
  if (!input.code)
    throw new PaddockError(
      'mcp_oauth_failed',
      `the authorization server refused: ${input.error ?? 'no code'}`,
    );
  const flow = JSON.parse(services.secrets.open(row.flow_sealed)) as McpOauthFlow;
  const tokens = await oauthStep('token exchange', () =>
    exchangeAuthorization(flow.authorizationServerUrl, {
      metadata: flow.metadata,
      clientInformation: flow.clientInformation,
      authorizationCode: input.code!,
      codeVerifier: flow.codeVerifier,
      redirectUri: flow.redirectUri,
      resource: flow.resource,
      fetchFn: services.outbound.fetch,
    }),
  );
  const { codeVerifier: _verifier, ...client } = flow;
  await saveTokens(services, row.agent_id, row.server_name, tokens, client);
  return { agentId: row.agent_id, serverName: row.server_name };
}

/** Refreshes under way in this process, so concurrent relayed requests share one. */
const refreshing = new Map<string, Promise<string | undefined>>();

/**
 * The access token to send an agent's server: the stored one while it has not lapsed; once it has,
 * a new one from its refresh token (stored, with the refresh token the server may rotate). Without a
 * token, or when the refresh fails (the report then says `oauth_expired`), none.
 */
export async function mcpAccessToken(
  services: OauthServices,
  input: { agentId: string; serverName: string; now: string },
): Promise<string | undefined> {
  const token = (await listMcpOauthTokens(services.store.db, input.agentId)).find(
    (t) => t.server_name === input.serverName,
  );
  if (!token) return undefined;
  if (token.expires_at === null || token.expires_at > input.now)
    return services.secrets.open(token.access_token_sealed);
  if (!token.refresh_token_sealed || !token.client_sealed) return undefined;
  const key = `${input.agentId}\n${input.serverName}`;
  let running = refreshing.get(key);
  if (!running) {
    running = refresh(services, token).finally(() => refreshing.delete(key));
    refreshing.set(key, running);
  }
  return running;
}

async function refresh(services: OauthServices, token: McpOauthTokenRow): Promise<string | undefined> {
  const client = JSON.parse(services.secrets.open(token.client_sealed!)) as McpOauthClient;
  try {
    const tokens = await refreshAuthorization(client.authorizationServerUrl, {
      metadata: client.metadata,
      clientInformation: client.clientInformation,
      refreshToken: services.secrets.open(token.refresh_token_sealed!),
      resource: client.resource,
      fetchFn: services.outbound.fetch,
    });
    await saveTokens(services, token.agent_id, token.server_name, tokens, client);
    return tokens.access_token;
  } catch {
    return undefined;
  }
}

function saveTokens(
  services: Pick<Services, 'store' | 'secrets'>,
  agentId: string,
  serverName: string,
  tokens: OAuthTokens,
  client: McpOauthClient,
): Promise<void> {
  return saveMcpOauthToken(services, {
    agentId,
    serverName,
    accessToken: tokens.access_token,
    refreshToken: tokens.refresh_token,
    expiresAt:
      tokens.expires_in === undefined
        ? undefined
        : timestamp(new Date(Date.now() + tokens.expires_in * 1000)),
    client: JSON.stringify(client),
  });
}

/** A step of the flow that failed: 502 `mcp_oauth_failed`, saying which step, without what the server sent. */
async function oauthStep<T>(step: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const reason = error instanceof Error ? error.name : 'error';
    throw new PaddockError('mcp_oauth_failed', `MCP authorization failed at ${step} (${reason})`);
  }
}
