import { getMcpServerReport, type Services, startMcpOauth } from '@paddock/core';
import { agentParamsSchema, mcpServerReportSchema } from '@paddock/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ctxOf } from '../context.ts';
import { mcpOauthCallbackPath } from '../public/mcp-oauth.ts';

/**
 * The MCP server report of an agent (a read: no scope; the agent must be reachable), and the start of
 * a url server's OAuth authorization (`publish`).
 */
export function mcpServerRoutes(app: FastifyInstance, services: Services): void {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/agents/:agent_id/mcp-servers',
    {
      schema: {
        operationId: 'listAgentMcpServers',
        summary: "Report an agent's MCP servers: transport, authorization, last check",
        params: agentParamsSchema,
        errors: ['agent_not_found'],
        response: { 200: z.object({ items: z.array(mcpServerReportSchema) }) },
      },
    },
    (request) => getMcpServerReport(ctxOf(services, request), services, { agentId: request.params.agent_id }),
  );

  app.withTypeProvider<ZodTypeProvider>().post(
    '/agents/:agent_id/mcp-servers/:server_name/oauth',
    {
      config: { auth: { scope: 'publish' } },
      schema: {
        operationId: 'startMcpServerOauth',
        summary: "Start the OAuth authorization of an agent's url MCP server: answers the URL the user opens",
        params: agentParamsSchema.extend({ server_name: z.string().min(1).max(100) }),
        errors: ['agent_not_found', 'mcp_server_not_found', 'mcp_oauth_failed'],
        response: { 200: z.object({ authorization_url: z.string() }) },
      },
    },
    (request) =>
      startMcpOauth(ctxOf(services, request), services, {
        agentId: request.params.agent_id,
        serverName: request.params.server_name,
        // The callback on this server as the caller reached it, where the user's browser comes back.
        redirectUri: `${request.protocol}://${request.host}${mcpOauthCallbackPath}`,
      }),
  );
}
