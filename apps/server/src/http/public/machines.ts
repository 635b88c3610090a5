import { machineCapabilities, type Services } from '@paddock/core';
import { machineCapabilitiesSchema } from '@paddock/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { ctxOf } from '../context.ts';

export function machineRoutes(app: FastifyInstance, services: Services): void {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/v2/machines/capabilities',
    {
      schema: {
        operationId: 'getMachineCapabilities',
        summary: 'What each sandbox provider offers the caller: sizes, shared folders, accelerators',
        response: { 200: machineCapabilitiesSchema },
      },
    },
    (request) => machineCapabilities(ctxOf(services, request), services),
  );
}
