import { orgUsage, type Services } from '@paddock/core';
import { orgParamsSchema, usageQuerySchema, usageReportSchema } from '@paddock/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { ctxOf } from '../context.ts';

/** An organization's model usage over time (beyond the spec; the web app's chart). */
export function usageRoutes(app: FastifyInstance, services: Services): void {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/orgs/:org_id/usage',
    {
      schema: {
        operationId: 'getOrgUsage',
        summary: "An organization's model tokens by day, by agent and for its busiest threads",
        params: orgParamsSchema,
        querystring: usageQuerySchema,
        errors: ['org_not_found'],
        response: { 200: usageReportSchema },
      },
    },
    (request) =>
      orgUsage(ctxOf(services, request), { orgId: request.params.org_id, days: request.query.days }),
  );
}
