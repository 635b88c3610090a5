import { type Services, updateAgent } from '@paddock/core';
import { agentParamsSchema, agentPatchSchema, agentRecordSchema } from '@paddock/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { sandboxCannotRewriteAgent } from '../auth.ts';
import { ctxOf } from '../context.ts';

export function agentRoutes(app: FastifyInstance, services: Services): void {
  app.withTypeProvider<ZodTypeProvider>().patch(
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
      schema: { params: agentParamsSchema, body: agentPatchSchema, response: { 200: agentRecordSchema } },
    },
    (request) =>
      updateAgent({ ctx: ctxOf(services, request), agentId: request.params.agent_id, patch: request.body }),
  );
}
