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
        operationId: 'listOrchestrations',
        summary: "List a team's orchestrations",
        params: orgTeamParamsSchema,
        errors: ['team_not_found'],
        response: { 200: z.object({ items: z.array(orchestrationSchema) }) },
      },
    },
    (request) =>
      listOrchestrations(ctxOf(services, request), {
        orgId: request.params.org_id,
        teamId: request.params.team_id,
      }),
  );
  r.post(
    '/orchestrations',
    {
      config: write,
      schema: {
        operationId: 'createOrchestration',
        summary: 'Create an orchestration: members and the edges between them',
        body: orchestrationCreateBodySchema,
        errors: ['team_not_found', 'orchestration_member_denied', 'invalid_orchestration_edge'],
        response: { 201: orchestrationSchema },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await createOrchestration(ctxOf(services, request), { body: request.body })),
  );
  r.get(
    '/orchestrations/:orch_id',
    {
      config: read,
      schema: {
        operationId: 'getOrchestration',
        summary: 'Get an orchestration with its members and edges',
        params: orchestrationParamsSchema,
        errors: ['orchestration_not_found'],
        response: { 200: orchestrationSchema },
      },
    },
    (request) => getOrchestration(ctxOf(services, request), { orchestrationId: request.params.orch_id }),
  );
  r.get(
    '/orchestrations/:orch_id/manifest',
    {
      config: read,
      schema: {
        operationId: 'getOrchestrationManifest',
        summary: "Get an orchestration with every member's manifest",
        params: orchestrationParamsSchema,
        errors: ['orchestration_not_found'],
        response: { 200: orchestrationManifestSchema },
      },
    },
    (request) =>
      getOrchestrationManifest(ctxOf(services, request), services, {
        orchestrationId: request.params.orch_id,
      }),
  );
  r.put(
    '/orchestrations/:orch_id',
    {
      config: write,
      schema: {
        operationId: 'updateOrchestration',
        summary: 'Update an orchestration (members and edges are replaced whole)',
        params: orchestrationParamsSchema,
        body: orchestrationUpdateBodySchema,
        errors: [
          'orchestration_not_found',
          'conflict',
          'orchestration_member_denied',
          'invalid_orchestration_edge',
        ],
        response: { 200: orchestrationSchema },
      },
    },
    (request) =>
      updateOrchestration(ctxOf(services, request), {
        orchestrationId: request.params.orch_id,
        body: request.body,
      }),
  );
}
