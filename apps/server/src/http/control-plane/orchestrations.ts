import {
  createOrchestration,
  getOrchestration,
  getOrchestrationManifest,
  listOrchestrations,
  type Services,
  updateOrchestration,
} from '@paddock/core';
import {
  orchestrationCreateBodySchema,
  orchestrationManifestSchema,
  orchestrationParamsSchema,
  orchestrationSchema,
  orchestrationUpdateBodySchema,
  orgTeamParamsSchema,
} from '@paddock/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ctxOf } from '../context.ts';

/** The five orchestration routes refuse agent- and thread-bound credentials (string detail). */
const userWideRead = { auth: { userWide: 'string' as const } };
const userWideWrite = { auth: { scope: 'publish' as const, userWide: 'string' as const } };

/** Orchestrations (spec control plane rule 9, D13). */
export function orchestrationRoutes(app: FastifyInstance, services: Services): void {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get(
    '/orgs/:org_id/teams/:team_id/orchestrations',
    {
      config: userWideRead,
      schema: {
        params: orgTeamParamsSchema,
        response: { 200: z.object({ items: z.array(orchestrationSchema) }) },
      },
    },
    (request) =>
      listOrchestrations({
        ctx: ctxOf(services, request),
        orgId: request.params.org_id,
        teamId: request.params.team_id,
      }),
  );
  r.post(
    '/orchestrations',
    {
      config: userWideWrite,
      schema: { body: orchestrationCreateBodySchema, response: { 201: orchestrationSchema } },
    },
    async (request, reply) =>
      reply.code(201).send(await createOrchestration({ ctx: ctxOf(services, request), body: request.body })),
  );
  r.get(
    '/orchestrations/:orch_id',
    {
      config: userWideRead,
      schema: { params: orchestrationParamsSchema, response: { 200: orchestrationSchema } },
    },
    (request) => getOrchestration({ ctx: ctxOf(services, request), orchestrationId: request.params.orch_id }),
  );
  r.get(
    '/orchestrations/:orch_id/manifest',
    {
      config: userWideRead,
      schema: { params: orchestrationParamsSchema, response: { 200: orchestrationManifestSchema } },
    },
    (request) =>
      getOrchestrationManifest({ ctx: ctxOf(services, request), orchestrationId: request.params.orch_id }),
  );
  r.put(
    '/orchestrations/:orch_id',
    {
      config: userWideWrite,
      schema: {
        params: orchestrationParamsSchema,
        body: orchestrationUpdateBodySchema,
        response: { 200: orchestrationSchema },
      },
    },
    (request) =>
      updateOrchestration({
        ctx: ctxOf(services, request),
        orchestrationId: request.params.orch_id,
        body: request.body,
      }),
  );
}
