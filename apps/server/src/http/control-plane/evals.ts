import { listEvalRuns, listEvals, type Services, startEvalRuns } from '@paddock/core';
import {
  agentParamsSchema,
  evalDefinitionSchema,
  evalListQuerySchema,
  evalRunSchema,
  evalRunsQuerySchema,
  evalRunsStartBodySchema,
} from '@paddock/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ctxOf } from '../context.ts';

const publish = { auth: { scope: 'publish' as const } };
const runs = z.object({ items: z.array(evalRunSchema) });

/** Eval definitions, eval runs, and starting runs (a judge model settles them in the background). */
export function evalRoutes(app: FastifyInstance, services: Services): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/agents/:agent_id/evals',
    {
      schema: {
        params: agentParamsSchema,
        querystring: evalListQuerySchema,
        response: { 200: z.object({ items: z.array(evalDefinitionSchema) }) },
      },
    },
    (request) =>
      listEvals({
        ctx: ctxOf(services, request),
        agentId: request.params.agent_id,
        includeArchived: request.query.include_archived,
      }),
  );
  r.get(
    '/agents/:agent_id/eval-runs',
    { schema: { params: agentParamsSchema, querystring: evalRunsQuerySchema, response: { 200: runs } } },
    (request) =>
      listEvalRuns({
        ctx: ctxOf(services, request),
        agentId: request.params.agent_id,
        taskId: request.query.task_id,
        limit: request.query.limit,
      }),
  );
  r.post(
    '/agents/:agent_id/eval-runs',
    {
      config: publish,
      schema: { params: agentParamsSchema, body: evalRunsStartBodySchema, response: { 201: runs } },
    },
    async (request, reply) =>
      reply.code(201).send(
        await startEvalRuns({
          ctx: ctxOf(services, request),
          agentId: request.params.agent_id,
          body: request.body,
        }),
      ),
  );
}
