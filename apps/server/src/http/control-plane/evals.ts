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
        operationId: 'listAgentEvals',
        summary: "List an agent's eval definitions",
        params: agentParamsSchema,
        querystring: evalListQuerySchema,
        errors: ['agent_not_found'],
        response: { 200: z.object({ items: z.array(evalDefinitionSchema) }) },
      },
    },
    (request) =>
      listEvals(ctxOf(services, request), {
        agentId: request.params.agent_id,
        includeArchived: request.query.include_archived,
      }),
  );
  r.get(
    '/agents/:agent_id/eval-runs',
    {
      schema: {
        operationId: 'listEvalRuns',
        summary: "List an agent's eval runs, newest first",
        params: agentParamsSchema,
        querystring: evalRunsQuerySchema,
        errors: ['agent_not_found'],
        response: { 200: runs },
      },
    },
    (request) =>
      listEvalRuns(ctxOf(services, request), {
        agentId: request.params.agent_id,
        taskId: request.query.task_id,
        limit: request.query.limit,
      }),
  );
  r.post(
    '/agents/:agent_id/eval-runs',
    {
      config: publish,
      schema: {
        operationId: 'startEvalRuns',
        summary: 'Judge a task of the agent against its evals (the runs settle in the background)',
        params: agentParamsSchema,
        body: evalRunsStartBodySchema,
        errors: ['agent_not_found', 'task_not_found', 'eval_not_found'],
        response: { 201: runs },
      },
    },
    async (request, reply) =>
      reply.code(201).send(
        await startEvalRuns(ctxOf(services, request), services, {
          agentId: request.params.agent_id,
          body: request.body,
        }),
      ),
  );
}
