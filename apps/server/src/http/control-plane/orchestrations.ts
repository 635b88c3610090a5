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
// Spec Authentication 12: the five orchestration endpoints refuse resource-bound credentials.
const refuseBound = { as: 'binding_denied', what: 'use orchestration endpoints' } as const;
const read = { auth: { refuseBound } };
const write = { auth: { scope: 'publish' as const, refuseBound } };

/** Orchestrations (spec control plane rule 9, D13). */
export function orchestrationRoutes(app: FastifyInstance, services: Services): void {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get(
    '/orgs/:org_id/teams/:team_id/orchestrations',
    {
      config: read,
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
      config: write,
      schema: { body: orchestrationCreateBodySchema, response: { 201: orchestrationSchema } },
    },
    async (request, reply) =>
      reply.code(201).send(await createOrchestration({ ctx: ctxOf(services, request), body: request.body })),
  );
  r.get(
    '/orchestrations/:orch_id',
    {
      config: read,
      schema: { params: orchestrationParamsSchema, response: { 200: orchestrationSchema } },
    },
    (request) => getOrchestration({ ctx: ctxOf(services, request), orchestrationId: request.params.orch_id }),
  );
  r.get(
    '/orchestrations/:orch_id/manifest',
    {
      config: read,
      schema: { params: orchestrationParamsSchema, response: { 200: orchestrationManifestSchema } },
    },
    (request) =>
      getOrchestrationManifest({ ctx: ctxOf(services, request), orchestrationId: request.params.orch_id }),
  );
  r.put(
    '/orchestrations/:orch_id',
    {
      config: write,
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
