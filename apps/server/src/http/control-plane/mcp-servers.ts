import { getMcpServerReport, type Services } from '@paddock/core';
import { agentParamsSchema, mcpServerReportSchema } from '@paddock/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ctxOf } from '../context.ts';

/** The MCP server report of an agent (a read: no scope; the agent must be reachable). */
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
}
