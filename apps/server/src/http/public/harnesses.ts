import { listHarnesses, type Services } from '@paddock/core';
import { gatewayDialects, type HarnessListing } from '@paddock/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';

const harnessListingSchema = z.object({
  harness: z.string(),
  program: z.string(),
  version: z.string(),
  kind: z.enum(['builtin', 'acp']),
  installed: z.boolean().describe("Whether this node's runner has the program installed"),
  dialect: z.enum(gatewayDialects).nullable().describe('The model gateway dialect the program speaks'),
  abilities: z.object({
    steering: z.boolean(),
    resume: z.enum(['native', 'transcript']),
    cancel: z.boolean(),
  }),
}) satisfies z.ZodType<HarnessListing>;

export function harnessRoutes(app: FastifyInstance, services: Services): void {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/v2/harnesses',
    {
      schema: {
        operationId: 'listHarnesses',
        summary:
          'Each harness value: its program and version, whether it is installed, its dialect and abilities',
        response: { 200: z.object({ items: z.array(harnessListingSchema) }) },
      },
    },
    () => ({ items: listHarnesses(services) }),
  );
}
