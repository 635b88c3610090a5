import { createSchedule, cronIssues, deleteSchedule, listSchedules, type Services } from '@paddock/core';
import {
  agentParamsSchema,
  scheduleCreateBodySchema,
  scheduleParamsSchema,
  scheduleSchema,
} from '@paddock/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { sandboxCannotRewriteAgent } from '../auth.ts';
import { ctxOf } from '../context.ts';

/** Like the other writes that change an agent: `publish`, and never from one of its threads' sandboxes. */
const agentWrite = { auth: { scope: 'publish' as const, refuseBound: sandboxCannotRewriteAgent } };

/** A bad cron expression or an unknown time zone is a D3 422 naming the field. */
const createBody = scheduleCreateBodySchema.superRefine((body, ctx) => {
  for (const issue of cronIssues(body.cron, body.time_zone))
    ctx.addIssue({ code: 'custom', path: [issue.field], message: issue.message });
});

/** An agent's schedules (issue 16 §3): each due time starts one thread on the agent. */
export function scheduleRoutes(app: FastifyInstance, services: Services): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/agents/:agent_id/schedules',
    {
      schema: {
        operationId: 'listSchedules',
        summary: "List an agent's schedules, oldest first",
        params: agentParamsSchema,
        errors: ['agent_not_found'],
        response: { 200: z.object({ items: z.array(scheduleSchema) }) },
      },
    },
    (request) => listSchedules(ctxOf(services, request), { agentId: request.params.agent_id }),
  );
  r.post(
    '/agents/:agent_id/schedules',
    {
      config: agentWrite,
      schema: {
        operationId: 'createSchedule',
        summary: 'Add a schedule: a cron expression in a time zone, and the input each due time sends',
        params: agentParamsSchema,
        body: createBody,
        errors: ['agent_not_found', 'forbidden'],
        response: { 201: scheduleSchema },
      },
    },
    async (request, reply) =>
      reply.code(201).send(
        await createSchedule(ctxOf(services, request), {
          agentId: request.params.agent_id,
          body: request.body,
        }),
      ),
  );
  r.delete(
    '/agents/:agent_id/schedules/:schedule_id',
    {
      config: agentWrite,
      schema: {
        operationId: 'deleteSchedule',
        summary: 'Remove a schedule',
        params: scheduleParamsSchema,
        errors: ['agent_not_found', 'schedule_not_found', 'forbidden'],
        response: { 204: { type: 'null', description: 'Removed' } },
      },
    },
    async (request, reply) => {
      await deleteSchedule(ctxOf(services, request), {
        agentId: request.params.agent_id,
        scheduleId: request.params.schedule_id,
      });
      return reply.code(204).send();
    },
  );
}
