import { getAgent, type Services, updateAgent } from '@paddock/core';
import { agentParamsSchema, agentPatchSchema, agentRecordSchema } from '@paddock/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { sandboxCannotRewriteAgent } from '../auth.ts';
import { ctxOf } from '../context.ts';

export function agentRoutes(app: FastifyInstance, services: Services): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/v2/agents/:agent_id',
    {
      schema: {
        operationId: 'getAgent',
        summary: "Read an agent's spec",
        params: agentParamsSchema,
        errors: ['agent_not_found'],
        response: { 200: agentRecordSchema },
      },
    },
    (request) => getAgent(ctxOf(services, request), services, { agentId: request.params.agent_id }),
  );
  r.patch(
    '/v2/agents/:agent_id',
    {
      // Spec Authentication 11: an agent's secrets always need `publish`; the rest of the patch is a
      // guarded write, enforced only when the deployment turns the guard on.
      config: {
        auth: {
          guarded: { scope: 'publish', unlessBody: ['secrets'] },
          refuseBound: sandboxCannotRewriteAgent,
        },
      },
      schema: {
        operationId: 'updateAgent',
        summary: "Update an agent's spec (fields left out are kept)",
        params: agentParamsSchema,
        body: agentPatchSchema,
        errors: ['agent_not_found', 'conflict', 'size_not_offered', 'network_not_allowed', 'unknown_skill'],
        response: { 200: agentRecordSchema },
      },
    },
    (request) =>
      updateAgent(ctxOf(services, request), services, {
        agentId: request.params.agent_id,
        patch: request.body,
      }),
  );
}
