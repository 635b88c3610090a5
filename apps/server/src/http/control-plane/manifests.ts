import { getManifest, getRevision, publishManifest, type Services } from '@paddock/core';
import { agentParamsSchema, manifestPutBodySchema, manifestSchema, revisionSchema } from '@paddock/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { sandboxCannotRewriteAgent } from '../auth.ts';
import { ctxOf } from '../context.ts';

/** Manifests (the agent's whole content as components) and the revision drift check. */
export function manifestRoutes(app: FastifyInstance, services: Services): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/agents/:agent_id/manifest',
    {
      schema: {
        operationId: 'getAgentManifest',
        summary: "Get an agent's manifest: its content as components",
        params: agentParamsSchema,
        errors: ['agent_not_found'],
        response: { 200: manifestSchema },
      },
    },
    (request) => getManifest(ctxOf(services, request), services, { agentId: request.params.agent_id }),
  );
  r.put(
    '/agents/:agent_id/manifest',
    {
      config: { auth: { scope: 'publish', refuseBound: sandboxCannotRewriteAgent } },
      schema: {
        operationId: 'publishAgentManifest',
        summary: "Replace an agent's manifest (with base_revision, only if nothing changed since)",
        params: agentParamsSchema,
        body: manifestPutBodySchema,
        errors: [
          'agent_not_found',
          'base_revision_required',
          'base_revision_conflict',
          'conflict',
          'size_not_offered',
        ],
        response: { 200: manifestSchema },
      },
    },
    (request) =>
      publishManifest(ctxOf(services, request), services, {
        agentId: request.params.agent_id,
        body: request.body,
      }),
  );
  r.get(
    '/agents/:agent_id/revision',
    {
      schema: {
        operationId: 'getAgentRevision',
        summary: "Get an agent's current revision (the drift check)",
        params: agentParamsSchema,
        errors: ['agent_not_found'],
        response: { 200: revisionSchema },
      },
    },
    (request) => getRevision(ctxOf(services, request), services, { agentId: request.params.agent_id }),
  );
}
