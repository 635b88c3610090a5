import { finishMcpOauth, type Services } from '@paddock/core';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { rawBody } from '../openapi.ts';

/** Where an authorization server sends the user's browser back (the OAuth redirect URI). */
export const mcpOauthCallbackPath = '/v2/mcp/oauth/callback';

/**
 * The end of an MCP server's OAuth authorization: no credential (a browser arrives here from the
 * authorization server); the flow's `state` is what admits it, once.
 */
export function mcpOauthRoutes(app: FastifyInstance, services: Services): void {
  app.withTypeProvider<ZodTypeProvider>().get(
    mcpOauthCallbackPath,
    {
      config: { auth: false },
      schema: {
        operationId: 'finishMcpServerOauth',
        summary: "The OAuth redirect of an MCP server's authorization: stores the agent's token",
        querystring: z.object({
          state: z.string().min(1).max(200),
          code: z.string().min(1).max(4096).optional(),
          error: z.string().max(200).optional(),
        }),
        errors: ['mcp_oauth_state_invalid', 'mcp_oauth_failed'],
        response: { 200: rawBody('A page saying the server is connected', 'text/plain') },
      },
    },
    async (request, reply) => {
      const { serverName } = await finishMcpOauth(services, request.query);
      return reply
        .type('text/plain; charset=utf-8')
        .send(`The MCP server ${serverName} is connected. You can close this page.\n`);
    },
  );
}
